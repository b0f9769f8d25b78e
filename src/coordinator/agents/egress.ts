/**
 * Where an agent's confined network may go (sandboxNetwork.ts enforces it): the hosts its model's
 * API and login live on (known.ts), the endpoints its configuration names (its variables, its
 * settings files, `buckley.agent.env`), its MCP servers, our editor MCP server, and what
 * `buckley.agent.sandbox.network.allow` adds — nothing else. A rule is a host (`api.openai.com`),
 * a host and port (`127.0.0.1:11434`), a pattern (`*.googleapis.com`, `*-aiplatform.googleapis.com`)
 * or `*` (any public host: never the machine's own or its network's private addresses, which
 * must be named).
 */
import { BlockList, isIP } from 'node:net';

export interface EgressRule {
  /** Lower case; may hold `*`. */
  host: string;
  /** Any port when undefined. */
  port?: number;
}

/** A host name or address and its port, as a connection asks for it. */
export interface Destination {
  host: string;
  port: number;
}

/** `host`, `host:port`, `[::1]:port`, or a URL: the rule it makes; undefined for what is none. */
export function ruleOf(entry: string): EgressRule | undefined {
  const text = entry.trim().toLowerCase();
  if (!text) return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(text)) {
    const endpoint = endpointOf(text);
    return endpoint && { host: endpoint.host, port: endpoint.port };
  }
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, ...(bracketed[2] ? { port: Number(bracketed[2]) } : {}) };
  const hostPort = /^([^:/\s]+)(?::(\d+))?$/.exec(text);
  if (hostPort) return { host: hostPort[1]!, ...(hostPort[2] ? { port: Number(hostPort[2]) } : {}) };
  // A bare IPv6 address.
  return isIP(text) === 6 ? { host: text } : undefined;
}

/** The host and port an http(s) URL (or a `host:port` an agent's variable holds) points at. */
export function endpointOf(value: string): Destination | undefined {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim()) ? value.trim() : `http://${value.trim()}`);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'ws:' && url.protocol !== 'wss:') return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!host) return undefined;
  const port = url.port ? Number(url.port) : url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
  return { host, port };
}

function hostMatches(pattern: string, host: string): boolean {
  if (!pattern.includes('*')) return pattern === host;
  // `*.example.com` also stands for example.com itself.
  if (pattern.startsWith('*.') && host === pattern.slice(2)) return true;
  const regex = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[a-z0-9.-]*')}$`);
  return regex.test(host);
}

/** Whether `rules` let a connection to `destination` through, by its name (see `mayReach` for the address it resolves to). */
export function allows(rules: readonly EgressRule[], destination: Destination): boolean {
  const host = destination.host.toLowerCase().replace(/\.$/, '');
  return rules.some((rule) => (rule.port === undefined || rule.port === destination.port) && hostMatches(rule.host, host));
}

/**
 * The machine's own addresses, its network's, and those that are no public host's: loopback,
 * private and link-local ranges, shared address space, multicast and reserved ones, in IPv4 and
 * IPv6 alike — and IPv6's ways of carrying an IPv4 address (mapped `::ffff:7f00:1`, compatible,
 * NAT64, 6to4, Teredo), so that a name resolving to `::ffff:7f00:1` is judged as 127.0.0.1 is.
 */
const NOT_PUBLIC = (() => {
  const list = new BlockList();
  const v4: [string, number][] = [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]];
  const v6: [string, number][] = [['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32], ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]];
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
})();

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  // What is not an address at all is no public host's either.
  return family === 0 || NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Names that are the machine itself (RFC 6761: `localhost` and everything under it). */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Whether a connection allowed by name may go to the address its name resolved to: a private
 * address (the machine's own services, its network's) only where a rule names that host itself,
 * not through a pattern — `*` or `*.example.com` resolving to 127.0.0.1 reaches nothing of the user's.
 */
export function mayReach(rules: readonly EgressRule[], destination: Destination, address: string): boolean {
  if (!isPrivateAddress(address)) return allows(rules, destination);
  const host = destination.host.toLowerCase().replace(/\.$/, '');
  return rules.some((rule) => !rule.host.includes('*') && rule.host === host && (rule.port === undefined || rule.port === destination.port));
}

/** The rules, each once, in words for the log: `api.openai.com, 127.0.0.1:4000`. */
export function describeRules(rules: readonly EgressRule[]): string {
  return [...new Set(rules.map((rule) => (rule.port === undefined ? rule.host : `${rule.host.includes(':') ? `[${rule.host}]` : rule.host}:${rule.port}`)))].join(', ') || 'none';
}
