"""memlane's REST server (FastAPI): the mem0 open-source endpoints, the mem0 platform
client's endpoints, API keys and tenants, and the MCP endpoint at ``/mcp``."""

from memlane.server.app import DEFAULT_HOST, DEFAULT_PORT, ServerSettings, create_app

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "ServerSettings", "create_app"]
