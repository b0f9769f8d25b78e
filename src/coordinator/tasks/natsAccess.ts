/**
 * How a team's replica logs in to NATS, as NATS's own tools take it: credentials in the servers'
 * URLs (`nats://USER:PASSWORD@host:4222`, `nats://TOKEN@host:4222`), or the variables the `nats`
 * CLI reads (NATS_USER and NATS_PASSWORD, NATS_TOKEN, NATS_CREDS, NATS_CA, NATS_CERT, NATS_KEY),
 * or `--nats-creds FILE` (a `.creds` file: a user's JWT and NKey seed, as `nsc` makes them);
 * TLS where a URL says `tls://` or a CA or a client certificate is given. The servers come back
 * without their credentials: what is said and logged of them never holds a secret.
 */
import { accessSync, constants } from 'node:fs';

export interface NatsAuth {
  user?: string;
  pass?: string;
  token?: string;
  /** A `.creds` file (JWT and seed). */
  credsFile?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export interface NatsAccess {
  /** The servers' URLs without credentials: to connect to, and to name. */
  servers: string[];
  auth: NatsAuth;
  /** How it logs in, in words without the secret: "as user team", "with a token", "with the credentials in FILE", "without credentials". */
  how: string;
}

/** `urls` as `--nats` gave them, and the replica's environment: how to reach NATS, or what is wrong. */
export function natsAccessOf(urls: readonly string[], env: NodeJS.ProcessEnv, credsFlag?: string): NatsAccess | { problem: string } {
  const servers: string[] = [];
  const inUrls = new Set<string>();
  let fromUrl: Pick<NatsAuth, 'user' | 'pass' | 'token'> = {};
  let tls = false;
  for (const given of urls) {
    const parsed = parseServer(given);
    if ('problem' in parsed) return parsed;
    servers.push(parsed.server);
    tls ||= parsed.tls;
    if (parsed.login) {
      inUrls.add(JSON.stringify(parsed.login));
      fromUrl = parsed.login;
    }
  }
  if (inUrls.size > 1) return { problem: 'the --nats URLs carry different credentials: a replica logs in to every server of a cluster the same way (give them once, or with NATS_USER and NATS_PASSWORD)' };
  const credsFile = credsFlag ?? (env.NATS_CREDS || undefined);
  const tlsFiles = { caFile: env.NATS_CA || undefined, certFile: env.NATS_CERT || undefined, keyFile: env.NATS_KEY || undefined };
  if (Boolean(tlsFiles.certFile) !== Boolean(tlsFiles.keyFile)) return { problem: 'NATS_CERT and NATS_KEY go together (a client certificate and its key): give both, or neither' };
  for (const [what, file] of [['the NATS credentials file', credsFile], ['NATS_CA', tlsFiles.caFile], ['NATS_CERT', tlsFiles.certFile], ['NATS_KEY', tlsFiles.keyFile]] as const) {
    const problem = file ? unreadable(file, what) : undefined;
    if (problem) return { problem };
  }
  const login = inUrls.size ? fromUrl : env.NATS_TOKEN ? { token: env.NATS_TOKEN } : env.NATS_USER ? { user: env.NATS_USER, pass: env.NATS_PASSWORD ?? '' } : {};
  const withTls = tls || Object.values(tlsFiles).some(Boolean);
  const auth: NatsAuth = { ...login, ...(credsFile ? { credsFile } : {}), ...(withTls ? { tls: dropUndefined(tlsFiles) } : {}) };
  return { servers, auth, how: howOf(auth) };
}

/** One `--nats` server: its URL without credentials, whether it asks for TLS, and the credentials it carried. */
function parseServer(given: string): { server: string; tls: boolean; login?: Pick<NatsAuth, 'user' | 'pass' | 'token'> } | { problem: string } {
  if (!/^[a-z]+:\/\//i.test(given)) return { server: given, tls: false };
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return { problem: `--nats: ${redact(given)} is not a URL` };
  }
  const tls = url.protocol === 'tls:';
  const server = `${url.protocol}//${url.host}`;
  if (!url.username) return { server, tls };
  const user = decodeURIComponent(url.username);
  return { server, tls, login: url.password ? { user, pass: decodeURIComponent(url.password) } : { token: user } };
}

function howOf(auth: NatsAuth): string {
  const how = auth.credsFile ? `with the credentials in ${auth.credsFile}` : auth.token ? 'with a token' : auth.user ? `as user ${auth.user}` : 'without credentials';
  return auth.tls ? `${how}, over TLS` : how;
}

function unreadable(file: string, what: string): string | undefined {
  try {
    accessSync(file, constants.R_OK);
    return undefined;
  } catch (error) {
    return `${what} ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

const dropUndefined = <T extends object>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/** A URL as it may be said: its password (or token) left out. */
export function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1…@');
}
