"""Adapters that put memlane under agent frameworks (each an optional extra).

* ``memlane.integrations.langgraph_store``: ``MemlaneStore``, a LangGraph ``BaseStore``
  (``pip install memlane[langgraph]``);
* ``memlane.integrations.langchain``: ``MemlaneRetriever`` and ``memory_tools``
  for any tool-calling LangChain agent (``memlane[langchain]``);
* ``memlane.integrations.openai_agents``: ``memory_tools`` for the OpenAI Agents
  SDK (``memlane[openai-agents]``); memlane's MCP server (``memlane mcp``) is the
  other way in, see ``examples/openai_agents_mcp.py``.

Importing this package imports no framework; each module imports only its own.
"""
