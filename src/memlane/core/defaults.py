"""Default names and the home directory, in a module that imports only the standard library: the
``memlane`` command reads them when it starts, before it knows whether it will need the engine at all."""

import os
from pathlib import Path

#: the user the MCP tools act for when a call names no scope, over stdio (``memlane mcp --user-id``) and at
#: ``/mcp`` (``memlane serve --mcp-user-id``) alike
DEFAULT_USER_ID = "default"

#: the tenant of ``Memory()``, the CLI, ``memlane mcp`` and a server request without a key's tenant
DEFAULT_TENANT = "default"

#: the environment variable naming the memlane home (``~/.memlane`` without it)
HOME_ENV = "MEMLANE_HOME"


def memlane_home() -> Path:
    """Where the embedded store lives unless configured: ``$MEMLANE_HOME`` or ``~/.memlane``."""
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".memlane").expanduser()
