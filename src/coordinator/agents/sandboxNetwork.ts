/**
 * The agent's confined network. Its sandbox has a network namespace of its own (bubblewrap
 * `--unshare-net`): no interface but its own loopback, so neither the user's localhost services
 * nor the host's abstract Unix sockets (which belong to a network namespace) are there. What it
 * may reach (egress.ts) it reaches through us:
 *
 * - **a proxy**: an HTTP proxy (CONNECT for TLS and websockets, absolute URLs for plain HTTP) on
 *   a Unix socket of ours, bound into the sandbox; `socat` there listens on the sandbox's
 *   127.0.0.1 and relays to it, and `HTTPS_PROXY` and its kin point the agent at it. Each
 *   connection is judged by its host and port, then by the address the host resolves to (a
 *   private one only where a rule names that very host);
 * - **forwards**: an allowed endpoint on the machine's own loopback (a local model server, our
 *   editor MCP server) listens at its own port inside the sandbox too, for clients that never
 *   send loopback through a proxy (Go's, for one).
 *
 * Where buckley-lsp itself runs behind a proxy (HTTPS_PROXY in its environment), connections go
 * on through that one, CONNECT for each, but for its NO_PROXY and the machine's loopback.
 *
 * Needs `socat` (Debian: `apt install socat`); where it is missing the network is not confined,
 * and the user is told (pool.ts, doctor).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../logger.js';
import { allows, describeRules, isLocalhostName, mayReach, type Destination, type EgressRule } from './egress.js';
import { findOnPath } from './which.js';

/** How the sandbox reaches the network, for sandboxArgs. */
export interface NetworkPlan {
  /** Our sockets' folder, bound into the sandbox at the same path. */
  socketDir: string;
  /** socat, as found on the host. */
  socat: string;
  /** The proxy's port on the sandbox's loopback. */
  proxyPort: number;
  /** Endpoints of the machine's loopback, listened for inside at the same address and port. */
  forwards: { address: '127.0.0.1' | '::1'; port: number; socket: string }[];
}

/** In the environment of the sandbox's network relays (socat): they are buckley-lsp's, not the agent's. */
export const RELAY_MARK = 'BUCKLEY_NETWORK_RELAY';

/** The most connections the agent may hold open through us at once. */
const MAX_CONNECTIONS = 256;
/** How long a connection to an allowed host may take to open. */
const CONNECT_TIMEOUT_MS = 30_000;
const PROXY_PORTS = [3128, 3129, 8118, 8888];

/** socat on PATH, or why the network cannot be confined. */
export function findSocat(env: NodeJS.ProcessEnv = process.env): { socat: string } | { problem: string } {
  const socat = findOnPath('socat', env.PATH ?? '');
  return socat ? { socat } : { problem: 'socat is not installed: install it (Debian, Ubuntu: `apt install socat`; Fedora: `dnf install socat`) for the agent\'s network to be confined' };
}

/** The first port an ordinary user may listen on (Linux's net.ipv4.ip_unprivileged_port_start). */
const FIRST_UNPRIVILEGED_PORT = 1024;

/** The proxy and forwards of one sandbox, on the host. */
export class NetworkGate {
  private readonly servers: (Server | HttpServer)[] = [];
  private readonly refused = new Set<string>();
  private readonly sockets = new Set<Duplex>();
  readonly plan: NetworkPlan;

  private constructor(
    private readonly rules: readonly EgressRule[],
    private readonly logger: Logger,
    socat: string,
    /** The user's own proxy (their HTTPS_PROXY), which connections go through where it applies. */
    private readonly upstream?: UpstreamProxy,
  ) {
    const socketDir = mkdtempSync(join(tmpdir(), 'buckley-net-'));
    const forwards = loopbackForwards(rules, socketDir).filter((forward) => {
      // An ordinary user cannot listen there in the sandbox: its relay would never listen, and the
      // agent's start wait for it in vain (9 s). Said instead, once.
      if (forward.port >= FIRST_UNPRIVILEGED_PORT) return true;
      logger.warn(`the agent cannot reach ${forward.address === '::1' ? '[::1]' : forward.address}:${forward.port} from its sandbox: a port under ${FIRST_UNPRIVILEGED_PORT} cannot be listened on there. Serve it on a port above ${FIRST_UNPRIVILEGED_PORT - 1}, or set buckley.agent.sandbox.network.confine: false`);
      return false;
    });
    const taken = new Set(forwards.map((forward) => forward.port));
    this.plan = { socketDir, socat, proxyPort: PROXY_PORTS.find((port) => !taken.has(port)) ?? 3130, forwards };
  }

  /** A gate for `rules`: its proxy and forwards listening. */
  static async open(rules: readonly EgressRule[], logger: Logger, socat: string, env: NodeJS.ProcessEnv = process.env): Promise<NetworkGate> {
    const gate = new NetworkGate(rules, logger, socat, upstreamProxy(env));
    try {
      await gate.listen();
    } catch (error) {
      await gate.close();
      throw error;
    }
    logger.info(`the agent's network is confined: it reaches ${describeRules(rules)} (through buckley-lsp's proxy), nothing else`);
    return gate;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map((server) => new Promise<void>((done) => server.close(() => done()))));
    rmSync(this.plan.socketDir, { recursive: true, force: true });
  }

  private async listen(): Promise<void> {
    const proxy = createHttpServer({ requestTimeout: 0 }, (request, response) => this.forward(request, response));
    proxy.on('connect', (request: IncomingMessage, socket: Duplex, head: Buffer) => this.tunnel(request, socket, head));
    proxy.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(request, socket, head));
    proxy.maxConnections = MAX_CONNECTIONS;
    await this.serve(proxy, join(this.plan.socketDir, 'proxy.sock'));
    for (const forward of this.plan.forwards) {
      const target = { host: forward.address, port: forward.port };
      const server = createServer((socket) => this.pipe(socket, target, Buffer.alloc(0)));
      server.maxConnections = MAX_CONNECTIONS;
      await this.serve(server, forward.socket);
    }
  }

  private serve(server: Server | HttpServer, path: string): Promise<void> {
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  /** CONNECT host:port: a tunnel where the rules allow it. */
  private async tunnel(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.track(socket);
    const destination = parseAuthority(request.url ?? '');
    const judged = await this.judge(destination);
    if (!('address' in judged)) {
      socket.end(`HTTP/1.1 ${judged.status}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${judged.says}\n`);
      return;
    }
    this.pipe(socket, { host: judged.address, port: destination!.port }, head, true);
  }

  /** A websocket over plain HTTP (`GET ws://host/… Upgrade: websocket`): the request sent on, then the two joined. */
  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.track(socket);
    const url = absoluteUrl(request.url);
    const destination = url && { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 80) };
    const judged = url ? await this.judge(destination) : NOT_ABSOLUTE;
    if (!('address' in judged) || !url) {
      const { status, says } = 'address' in judged ? NOT_ABSOLUTE : judged;
      socket.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${says}\n`);
      return;
    }
    const address = judged.address;
    const lines = [`${request.method} ${url.pathname}${url.search} HTTP/1.1`];
    for (let i = 0; i < request.rawHeaders.length; i += 2) if (!/^proxy-/i.test(request.rawHeaders[i]!)) lines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`);
    this.pipe(socket, { host: address, port: destination!.port }, Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), head]));
  }

  /** A plain-HTTP request in absolute form (`GET http://host/…`): sent on where the rules allow it. */
  private async forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = absoluteUrl(request.url);
    const destination = url && { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 80) };
    const judged = url ? await this.judge(destination) : NOT_ABSOLUTE;
    if (!('address' in judged) || !url) {
      const { status, says } = 'address' in judged ? NOT_ABSOLUTE : judged;
      response.writeHead(Number(status.slice(0, 3)), { 'content-type': 'text/plain', connection: 'close' }).end(`${says}\n`);
      return;
    }
    const address = judged.address;
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !/^proxy-/i.test(name)));
    const via = this.upstream?.applies(destination!.host) ? this.upstream : undefined;
    const outgoing = via
      ? httpRequest({ host: via.host, port: via.port, method: request.method, path: url.href, headers: { ...headers, ...via.authorization }, timeout: CONNECT_TIMEOUT_MS })
      : httpRequest({ host: address, port: destination!.port, method: request.method, path: `${url.pathname}${url.search}`, headers, timeout: CONNECT_TIMEOUT_MS });
    outgoing.on('response', (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    outgoing.on('error', (error) => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(`buckley-lsp's proxy could not reach ${url!.host}: ${error.message}\n`);
    });
    request.pipe(outgoing);
  }

  /** The address to connect to for `destination`, or undefined (said once per host) where the rules refuse it. */
  /**
   * Where a connection to `destination` goes, or what the agent is answered: 403 where the rules
   * do not allow it, 502 where its name does not resolve (it is allowed: the network failed, and
   * an agent may try again) — each in the words the log has.
   */
  private async judge(destination: Destination | undefined): Promise<{ address: string } | { status: string; says: string }> {
    if (!destination) return { status: '400 Bad Request', says: 'buckley-lsp\'s proxy needs host:port' };
    if (!allows(this.rules, destination)) return this.refuse(destination, 'not among the hosts it may reach');
    // Through the user's proxy the name is its to resolve: an address written out is judged as it is.
    if (this.upstream?.applies(destination.host)) {
      if (isIP(destination.host) && !mayReach(this.rules, destination, destination.host)) return this.refuse(destination, 'an address of this machine or its network that no rule names');
      return { address: destination.host };
    }
    let address: string;
    try {
      address = isLocalhostName(destination.host) ? '127.0.0.1' : (await lookup(destination.host)).address;
    } catch (error) {
      const why = `its name does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
      this.say(destination, `the agent's sandbox could not connect to ${destination.host}:${destination.port}: ${why}`);
      return { status: '502 Bad Gateway', says: `buckley-lsp's proxy cannot reach ${destination.host}:${destination.port}: ${why}` };
    }
    if (!mayReach(this.rules, destination, address)) return this.refuse(destination, `it resolves to ${address}, an address of this machine or its network that no rule names`);
    return { address };
  }

  private refuse(destination: Destination, why: string): { status: string; says: string } {
    this.say(destination, `the agent's sandbox refused a connection to ${destination.host}:${destination.port}: ${why} (buckley.agent.sandbox.network.allow lets it through)`);
    return { status: '403 Forbidden', says: `buckley-lsp's sandbox does not let the agent reach ${destination.host}:${destination.port}: ${why} (buckley.agent.sandbox.network.allow)` };
  }

  /** Said once for each destination. */
  private say(destination: Destination, words: string): void {
    const key = `${destination.host}:${destination.port}`;
    if (this.refused.has(key)) return;
    this.refused.add(key);
    this.logger.warn(words);
  }


  /** `client` joined to a new connection to `target` (after a tunnel's "200" when `established`). */
  private pipe(client: Duplex, target: { host: string; port: number }, head: Buffer, established = false): void {
    this.track(client);
    let joined = false;
    const fail = (error: Error) => {
      if (established && !joined) client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${error.message}\n`);
      else client.destroy();
    };
    this.open(target).then((upstream) => {
      joined = true;
      this.track(upstream);
      if (client.destroyed) return upstream.destroy();
      if (established) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      client.pipe(upstream).pipe(client);
      upstream.once('error', () => client.destroy());
      client.once('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    }, fail);
  }

  /** A connection to `target`: straight, or through the user's proxy (CONNECT) where it applies. */
  private open(target: { host: string; port: number }): Promise<Socket> {
    const via = this.upstream?.applies(target.host) ? this.upstream : undefined;
    return new Promise((resolve, reject) => {
      const socket: Socket = via ? connect({ host: via.host, port: via.port }) : connect({ host: target.host, port: target.port });
      this.track(socket);
      socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Error(`${via ? 'the proxy' : target.host} did not answer in time`)));
      socket.once('error', reject);
      socket.once('connect', () => {
        if (!via) {
          socket.setTimeout(0);
          socket.off('error', reject);
          return resolve(socket);
        }
        const authority = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
        const auth = via.authorization['proxy-authorization'] ? `proxy-authorization: ${via.authorization['proxy-authorization']}\r\n` : '';
        socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${auth}\r\n`);
        let answer = Buffer.alloc(0);
        const read = (chunk: Buffer) => {
          answer = Buffer.concat([answer, chunk]);
          const end = answer.indexOf('\r\n\r\n');
          if (end < 0) return answer.length > 16 * 1024 ? socket.destroy(new Error('the proxy answered CONNECT at length')) : undefined;
          socket.off('data', read);
          const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer.subarray(0, end).toString('latin1'))?.[1];
          if (status !== '200') return socket.destroy(new Error(`the proxy ${via.host}:${via.port} answered CONNECT ${authority} with ${status ?? 'no status'}`));
          socket.setTimeout(0);
          socket.off('error', reject);
          if (answer.length > end + 4) socket.unshift(answer.subarray(end + 4));
          resolve(socket);
        };
        socket.on('data', read);
      });
    });
  }

  /**
   * Every socket of the gate, on either side, closed with it. An error on one (a client gone before
   * its answer is written: EPIPE) ends that connection alone: unheard, it would end the process.
   */
  private track(socket: Duplex): void {
    if (this.sockets.has(socket)) return;
    this.sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => this.sockets.delete(socket));
  }
}

interface UpstreamProxy {
  host: string;
  port: number;
  authorization: Record<string, string>;
  /** Whether a connection to `host` goes through it (not a loopback address, not in its NO_PROXY). */
  applies(host: string): boolean;
}

const PROXY_VARIABLE = /^(https?|all|no)_proxy$/i;

/**
 * The environment the user's own proxy is read from: buckley-lsp's, unless `buckley.agent.env`
 * gives the agent proxy variables of its own — then those alone (the agent's proxy is the one it
 * would have used without the sandbox).
 */
export function userProxyEnvironment(serverEnv: NodeJS.ProcessEnv, agentEnv: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const own = Object.entries(agentEnv ?? {}).filter(([name]) => PROXY_VARIABLE.test(name));
  if (!own.length) return serverEnv;
  return { ...Object.fromEntries(Object.entries(serverEnv).filter(([name]) => !PROXY_VARIABLE.test(name))), ...Object.fromEntries(own) };
}

/** What a request the proxy cannot take is answered. */
const NOT_ABSOLUTE = { status: '400 Bad Request', says: 'buckley-lsp\'s proxy takes CONNECT and absolute http:// (or ws://) URLs only' };

/** The user's own proxy, from the environment buckley-lsp runs in (HTTPS_PROXY and its kin, NO_PROXY). */
export function upstreamProxy(env: NodeJS.ProcessEnv): UpstreamProxy | undefined {
  const value = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy || env.ALL_PROXY || env.all_proxy;
  let url: URL;
  try {
    url = new URL(value && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? `http://${value}` : (value ?? ''));
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:') return undefined;
  const bypass = (env.NO_PROXY ?? env.no_proxy ?? '').split(',').map((entry) => entry.trim().toLowerCase().replace(/^\*?\./, '')).filter(Boolean);
  const user = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || 80),
    authorization: user ? { 'proxy-authorization': `Basic ${Buffer.from(user).toString('base64')}` } : {},
    applies: (host) => {
      const name = host.toLowerCase();
      if (isLocalhostName(name) || name === '::1' || /^127\./.test(name)) return false;
      return !bypass.some((entry) => entry === '*' || name === entry || name.endsWith(`.${entry}`));
    },
  };
}

/** A request's target in absolute form, http:// (or ws://) only; undefined for anything else. */
function absoluteUrl(target: string | undefined): URL | undefined {
  try {
    const url = new URL(target ?? '');
    return url.protocol === 'http:' || url.protocol === 'ws:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** `host:port`, `[v6]:port` → the destination; undefined for anything else. */
function parseAuthority(authority: string): Destination | undefined {
  const match = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(authority) ?? /^([^:\s/]+):(\d{1,5})$/.exec(authority);
  const port = match ? Number(match[2]) : 0;
  return match && port > 0 && port < 65536 ? { host: match[1]!.toLowerCase(), port } : undefined;
}

/** The rules that name a loopback endpoint (host and port): listened for inside the sandbox too. */
function loopbackForwards(rules: readonly EgressRule[], socketDir: string): NetworkPlan['forwards'] {
  const forwards = new Map<string, NetworkPlan['forwards'][number]>();
  for (const rule of rules) {
    if (rule.port === undefined || rule.host.includes('*')) continue;
    const addresses: ('127.0.0.1' | '::1')[] = rule.host === 'localhost' ? ['127.0.0.1', '::1'] : rule.host === '::1' ? ['::1'] : /^127\./.test(rule.host) ? ['127.0.0.1'] : [];
    // Only 127.0.0.1 and ::1 are forwarded (another 127.x would need an address the sandbox's loopback lacks).
    if (/^127\./.test(rule.host) && rule.host !== '127.0.0.1') continue;
    for (const address of addresses) {
      const key = `${address}:${rule.port}`;
      if (!forwards.has(key)) forwards.set(key, { address, port: rule.port, socket: join(socketDir, `fwd-${address === '::1' ? 6 : 4}-${rule.port}.sock`) });
    }
  }
  return [...forwards.values()];
}

/**
 * What runs in the sandbox before the agent: socat relays for the proxy and the forwards, a wait
 * until each listens (read from /proc/net: no sleeping on hope), then the agent itself (`exec`).
 */
export function launcherArgs(plan: NetworkPlan, command: readonly string[]): string[] {
  const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
  // In a subshell that ends at once: the relays are the sandbox's init's children, not the agent's
  // (whose process tree is its sessions': processes.ts), and marked as ours.
  const relay = (listen: string, socket: string) => `( ${RELAY_MARK}=1 ${quote(plan.socat)} ${listen},fork,reuseaddr UNIX-CONNECT:${quote(socket)} </dev/null >/dev/null 2>&1 & )`;
  const relays = [
    relay(`TCP4-LISTEN:${plan.proxyPort},bind=127.0.0.1`, join(plan.socketDir, 'proxy.sock')),
    ...plan.forwards.map((forward) => relay(forward.address === '::1' ? `TCP6-LISTEN:${forward.port},bind=[::1],ipv6only=1` : `TCP4-LISTEN:${forward.port},bind=127.0.0.1`, forward.socket)),
  ];
  const ports = [plan.proxyPort, ...plan.forwards.map((forward) => forward.port)].map((port) => port.toString(16).toUpperCase().padStart(4, '0'));
  const wait = `n=0; while [ $n -lt 500 ]; do ok=1; for p in ${[...new Set(ports)].join(' ')}; do grep -qE ":$p [0-9A-F]+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null || ok=0; done; [ $ok = 1 ] && break; n=$((n+1)); sleep 0.01; done`;
  return ['/bin/sh', '-c', `${relays.join('\n')}\n${wait}\nexec "$@"`, 'buckley-sandbox', ...command];
}

/**
 * The agent's environment in the sandbox: the proxy, in every spelling its tools read — but not
 * for the sandbox's own loopback, where agents talk to servers of their own (opencode's ACP mode
 * talks to its server on 127.0.0.1:4096) and where the forwards listen.
 */
export function proxyEnvironment(plan: NetworkPlan): { set: Record<string, string>; unset: string[] } {
  const proxy = `http://127.0.0.1:${plan.proxyPort}`;
  const set: Record<string, string> = {};
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) set[name] = set[name.toLowerCase()] = proxy;
  set.NO_PROXY = set.no_proxy = 'localhost,127.0.0.1,::1';
  return { set, unset: [] };
}

