/** The editor MCP server's names, shared with its stdio relay (which loads nothing else). */

/** Its name in the agent's list (Claude Code calls its tools `mcp__buckley-editor__…`). */
export const EDITOR_MCP_NAME = 'buckley-editor';
/** The stdio relay's environment: where the server is, and the secret. */
export const EDITOR_MCP_URL_ENV = 'BUCKLEY_EDITOR_MCP_URL';
export const EDITOR_MCP_SECRET_ENV = 'BUCKLEY_EDITOR_MCP_SECRET';
