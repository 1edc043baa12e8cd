"""Tools a conversation may call: built-ins, MCP servers, the approval policy (docs/design.md §1 "Tools").

Modules:

* ``registry`` — ``ToolRegistry`` (``engine.tools``): wire names vs policy names
  (``git__status`` / ``git/status``), the agent's offered tools, approval with trust
  rules, ``preview(call)`` for the approval prompt, ``run(call)`` that never raises.
* ``policy`` — how an agent's rules decide a call; write and shell need trust by name.
* ``builtin`` / ``file_tools`` / ``shell_tool`` / ``notes_tool`` — built-in tools, off unless
  an agent's ``enabled_tools`` lists them; file-system tools are confined by ``confine``.
* ``mcp_config`` — server records kept in the store's settings (key ``mcp_servers``).
* ``mcp_client`` — one server connection on the official SDK, in its own task.
* ``mcp_manager`` — ``McpServerManager`` (``engine.tool_servers``): list, add, remove,
  start, restart, stop servers; status and tools per server; stops them on exit.
* ``context`` — the request-scoped ``ToolContext`` (session id, history, allowed folders).
"""
