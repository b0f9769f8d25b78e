/**
 * The environment an agent gets: the server's, without the variables that hold the user's
 * secrets. A shell's `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN` or `DATABASE_PASSWORD` is a credential
 * as much as `~/.aws/credentials` is, and the sandbox hides the file: the variable must not walk
 * through either, into an agent whose model can have it printed, or into the commands it runs.
 *
 * Kept: the variables the agent itself needs — its own key variables (known.ts), what
 * `buckley.agent.env` sets (given to the agent on purpose), and the names the user lists in
 * `buckley.agent.passEnv` (`NAME`, or a pattern with `*`: `AWS_*`). What was kept back is said by
 * name, never by value (the log, `doctor`).
 */

/**
 * Words in a variable's name that say it holds a secret (`*KEY*`, `*TOKEN*`, …) — but a count of
 * tokens (`MAX_THINKING_TOKENS`, an agent's setting), a tokenizer's setting
 * (`TOKENIZERS_PARALLELISM`) and a keyboard's are not one.
 */
const SECRET_WORDS = /KEY(?!BOARD)|SECRET|TOKEN(?!S|IZER)|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|CREDS|PRIVATE|COOKIE|OAUTH|_AUTH|AUTH_|^AUTH$|_PWD$|^PGPASS|(^|_)PASS($|_)|_PAT$|^PAT$|^BW_SESSION$|^OP_SESSION_/;

/**
 * Logins whose names say nothing of secrets: a database's URL (`postgres://user:password@…`),
 * the user's SSH and GPG agents (a live key at the other end of a socket), a netrc file.
 */
const LOGINS = new Set(['DATABASE_URL', 'SSH_AUTH_SOCK', 'GPG_AGENT_INFO', 'NETRC']);

/** Names that only look like secrets: a shell's key-binding settings. */
const NOT_SECRETS = new Set(['KEYTIMEOUT', 'KEYMAP', 'XKB_DEFAULT_KEYMAP']);

/**
 * Values that are a secret whatever the variable holding them is called (`MY_GH=ghp_…`,
 * `NOTIFY=https://hooks.slack.com/services/…`): a URL with a password or a secret in its query, a
 * private key, a signed token, and the prefixed formats services give their keys (the ones secret
 * scanners look for).
 */
const SECRET_VALUES = [
  /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i,
  /^[a-z][a-z0-9+.-]*:\/\/[^?\s]*\?(.*&)?(access_?token|token|api_?key|key|secret|password|sig|signature|auth)=[^&\s]{8,}/i,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /^eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{16,}$/,
  /^(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,}|glpat-[\w-]{20,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z]{30,}|xox[abposr]-[\w-]{10,}|(sk|rk)_(live|test)_\w{16,}|sk-[\w-]{20,}|AIza[\w-]{35}|(AKIA|ASIA)[A-Z0-9]{16}|SG\.[\w-]{16,}\.[\w-]{16,})$/,
  /^https:\/\/(hooks\.slack\.com\/services|discord(app)?\.com\/api\/webhooks|[\w.-]+\.webhook\.office\.com)\//i,
];

/** Whether a variable (by its name, or by a value that is a secret in a known form) holds a secret. */
export function looksSecret(name: string, value: string | undefined): boolean {
  const upper = name.toUpperCase();
  if (NOT_SECRETS.has(upper)) return false;
  if (SECRET_WORDS.test(upper) || LOGINS.has(upper) || /_DSN$/.test(upper)) return true;
  const text = value?.trim();
  return text !== undefined && text.length >= 16 && SECRET_VALUES.some((pattern) => pattern.test(text));
}

/** `AWS_*` → a matcher of names; a name without `*` matches itself. */
export function nameMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((pattern) => !pattern.includes('*')));
  const globs = patterns.filter((pattern) => pattern.includes('*')).map((pattern) => new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`));
  return (name) => exact.has(name) || globs.some((glob) => glob.test(name));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

export interface AgentEnvironment {
  env: NodeJS.ProcessEnv;
  /** The names of the variables kept back, sorted. */
  withheld: string[];
  /** Secret-looking variables passed on because the agent's own settings name them, with the file that does. */
  named?: { name: string; file: string }[];
}

/**
 * `env` without its secrets, but for the names `keep` matches; `given` (buckley.agent.env) on top,
 * all of it kept.
 */
export function withoutSecrets(env: NodeJS.ProcessEnv, keep: (name: string) => boolean, given: Record<string, string> = {}): AgentEnvironment {
  const result: NodeJS.ProcessEnv = {};
  const withheld: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (looksSecret(name, value) && !keep(name)) withheld.push(name);
    else result[name] = value;
  }
  return { env: { ...result, ...given }, withheld: withheld.filter((name) => !(name in given)).sort() };
}

/** "AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN and 3 more": the names kept back, for a log line. */
export function withheldNames(withheld: readonly string[], shown = 8): string {
  if (withheld.length <= shown) return withheld.join(', ');
  return `${withheld.slice(0, shown).join(', ')} and ${withheld.length - shown} more`;
}
