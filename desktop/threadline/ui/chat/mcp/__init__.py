"""The chat's MCP room: the servers' prompts as slash commands and their resources as attachments."""
