"""`stet mcp`: the style sheet and trajectory feedback for agents, over the Model Context
Protocol (docs/mcp.md).

- `tools`: what the server offers (tools, their JSON Schemas, the brief resource) and the
  checks and calls behind them, without the MCP SDK;
- `server`: the SDK's low-level server over stdio (the only module that imports `mcp`);
- `install`: the configuration each MCP client reads, merged into its file.
"""
