"""The MCP client: connections to servers (stdio, streamable HTTP), their configuration,
secrets and sign-in, the person who answers a server's questions, and the manager that
offers the servers' tools to the registry. See docs/mcp.md."""
