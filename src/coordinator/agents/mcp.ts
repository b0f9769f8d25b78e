/**
 * The MCP servers an agent gets with each session (`buckley.agent.mcpServers`, by name, as Zed's
 * `context_servers`), in ACP's shape: a stdio server always (every ACP agent takes them); an HTTP
 * or SSE one only where the agent said it takes that transport (`mcpCapabilities`), else left out
 * and said once in the log.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { McpServerSetting } from '../../config.js';
import type { Logger } from '../../logger.js';

export type McpServers = Record<string, McpServerSetting>;

const pairs = (record: Record<string, string>) => Object.entries(record).map(([name, value]) => ({ name, value }));

/** The servers for a session of an agent that takes `transports`. */
export function sessionMcpServers(servers: McpServers | undefined, transports: { http: boolean; sse: boolean }, logger: Logger, said: Set<string>): acp.McpServer[] {
  return Object.entries(servers ?? {}).flatMap(([name, server]): acp.McpServer[] => {
    if ('command' in server) return [{ name, command: server.command, args: server.args, env: pairs(server.env) }];
    if (!transports[server.type]) {
      if (!said.has(name)) logger.warn(`the MCP server "${name}" (${server.type}, ${server.url}) is left out: the agent does not take ${server.type.toUpperCase()} MCP servers (it takes stdio ones: give a command)`);
      said.add(name);
      return [];
    }
    return [{ type: server.type, name, url: server.url, headers: pairs(server.headers) }];
  });
}
