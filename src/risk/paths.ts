/**
 * Where a path a tool names really is: `file://` URIs, `~`, `$HOME` and relative paths resolved,
 * `..` and symbolic links followed, so nothing escapes the workspace by spelling. And whether it
 * holds credentials.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pathTooLong, realPath } from '../fileAccess.js';

export interface Place {
  /** The workspace (absolute); unknown means every absolute path is outside it. */
  workspaceRoot?: string;
  /** The user's home directory, for `~` and `$HOME`. */
  home: string;
  /** The directory relative paths are relative to (default: the workspace root). */
  cwd?: string;
}

export interface PathFacts {
  /** The path as the tool wrote it. */
  written: string;
  /** Absolute and normalised, links followed where they exist; undefined when it cannot be known ($VAR). */
  resolved?: string;
  inside: boolean;
  /** What secret it holds, in a few words, when it is a credential file or directory. */
  credential?: string;
  /** A place where a write runs code later (git hooks, shell startup files). */
  persistent?: string;
}

/** `path` as an absolute path, or undefined when it depends on something unknown (`$BUILD`). */
export function resolvePath(written: string, place: Place): string | undefined {
  let path = written.trim();
  // Refused at once: resolving it could cost time in the square of its length.
  if (pathTooLong(path)) return undefined;
  if (/^file:/i.test(path)) {
    try {
      path = fileURLToPath(path);
    } catch {
      return undefined;
    }
  }
  path = path.replace(/^(\$HOME|\$\{HOME\})(?=\/|$)/, place.home).replace(/^\$\{?XDG_CONFIG_HOME\}?(?=\/|$)/, join(place.home, '.config'));
  if (path === '~' || path.startsWith('~/')) path = place.home + path.slice(1);
  else if (path.startsWith('~')) path = join(dirname(place.home), path.slice(1)); // ~user: another user's home
  if (/\$\{?[A-Za-z_]/.test(path)) return undefined;
  const base = place.cwd ? resolvePath(place.cwd, { ...place, cwd: undefined }) : place.workspaceRoot;
  if (!isAbsolute(path)) {
    if (!base) return undefined;
    path = resolve(base, path);
  }
  // Every link followed, a dangling one to its target (a link in the workspace may point anywhere,
  // and a write through a dangling one creates its target); unknown for a loop of links.
  return realPath(resolve(path));
}

export function isInside(path: string, root: string | undefined): boolean {
  if (!root) return false;
  const realRoot = realPath(resolve(root)) ?? resolve(root);
  const rel = relative(realRoot, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Credential files and directories, relative to the home directory. */
const HOME_CREDENTIALS: [string, string][] = [
  ['.ssh', 'SSH keys'],
  ['.gnupg', 'GnuPG keys'],
  ['.aws', 'AWS credentials'],
  ['.azure', 'Azure credentials'],
  ['.config/gcloud', 'Google Cloud credentials'],
  ['.kube', 'Kubernetes credentials'],
  ['.docker/config.json', 'Docker registry credentials'],
  ['.netrc', 'network passwords'],
  ['.npmrc', 'npm tokens'],
  ['.pypirc', 'PyPI tokens'],
  ['.git-credentials', 'git passwords'],
  ['.config/gh', 'GitHub tokens'],
  ['.config/hub', 'GitHub tokens'],
  ['.password-store', 'passwords'],
  ['.local/share/keyrings', 'the keyring'],
  ['.vault-token', 'a Vault token'],
  ['.terraform.d/credentials.tfrc.json', 'Terraform tokens'],
  ['.cargo/credentials', 'crates.io tokens'],
  ['.cargo/credentials.toml', 'crates.io tokens'],
  ['.gem/credentials', 'RubyGems tokens'],
  ['.config/op', '1Password'],
  ['.config/nats', "NATS logins (the nats CLI's contexts)"],
  ['.local/share/nats/nsc', 'NATS keys and credentials'],
  ['.nkeys', 'NATS keys'],
  ['.bash_history', 'shell history'],
  ['.zsh_history', 'shell history'],
  ['.python_history', 'Python history'],
  ['.psql_history', 'database history'],
  ['.mysql_history', 'database history'],
  ['.pgpass', 'database passwords'],
  ['.my.cnf', 'database passwords'],
  ['.m2/settings.xml', 'Maven repository passwords'],
  ['.m2/settings-security.xml', "Maven's master password"],
  ['.gradle/gradle.properties', 'Gradle repository tokens'],
  ['.config/containers/auth.json', 'container registry credentials'],
  ['.config/composer/auth.json', 'Composer tokens'],
  ['.composer/auth.json', 'Composer tokens'],
  ['.s3cfg', 'S3 keys'],
  ['.boto', 'cloud storage keys'],
  ['.config/rclone/rclone.conf', 'cloud storage keys'],
  ['.databrickscfg', 'Databricks tokens'],
  ['.oci', 'Oracle Cloud keys'],
  ['.config/doctl', 'DigitalOcean tokens'],
  ['.terraformrc', 'Terraform tokens'],
  ['.cache/huggingface/token', 'a Hugging Face token'],
  ['.huggingface/token', 'a Hugging Face token'],
  ['.config/sops', 'SOPS keys'],
  ['.local/share/keybase', 'Keybase keys'],
  ['.mozilla', "the browser's passwords and cookies"],
  ['.config/google-chrome', "the browser's passwords and cookies"],
  ['.config/chromium', "the browser's passwords and cookies"],
];
const SYSTEM_CREDENTIALS: [string, string][] = [
  ['/etc/shadow', 'password hashes'],
  ['/etc/gshadow', 'password hashes'],
  ['/etc/sudoers', 'sudo rules'],
  ['/etc/sudoers.d', 'sudo rules'],
  ['/etc/ssh', 'SSH host keys'],
  ['/root', "root's files"],
  ['/var/run/secrets', 'service account tokens'],
  ['/run/secrets', 'service account tokens'],
];
/** Credential files wherever they are, by name. */
const CREDENTIAL_NAMES: [RegExp, string][] = [
  [/^\.env(\..+)?$/, 'environment secrets'],
  [/^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/, 'an SSH private key'],
  [/\.(pem|key|p12|pfx|jks|keystore|kdbx|asc|gpg)$/i, 'keys or certificates'],
  // A file of data by that name (`credentials`, `secrets.yaml`, `credentials.json`); not code
  // (`secrets.py`, `credentials.ts`: the user's source, which the agent must read).
  [/^(credentials|secrets?)(\.(json|ya?ml|toml|ini|env|txt|conf|cfg|properties|xml|csv|enc|age|sops|gpg))*$/i, 'credentials'],
  [/^\.htpasswd$/, 'password hashes'],
  [/^\.envrc$/, 'environment secrets (direnv)'],
  [/^\.(git-credentials|netrc|pgpass|pypirc|vault-token|dockercfg)$/, 'passwords and tokens'],
  [/\.(ppk|keytab)$/i, 'keys'],
  [/\.tfvars(\.json)?$/, 'Terraform variables'],
  [/\.tfstate(\.backup)?$/, "Terraform state (its resources' secrets, in plain text)"],
  [/\.(creds|nk)$/, 'NATS credentials'],
  [/^service[-_]?account.*\.json$/i, 'a service account key'],
];
/** Harmless look-alikes of credential files. */
const NOT_CREDENTIALS = /^\.env\.(example|sample|template|dist|defaults)$|\.pub$/i;
/** Writing these runs code later: git hooks, shell and editor startup files, a project's editor and agent settings. */
const PERSISTENT: [RegExp, string][] = [
  [/(^|\/)\.git\/(hooks\/|config$)/, 'git runs it'],
  [/(^|\/)\.husky\/[^/]+$/, 'git runs it (husky)'],
  [/(^|\/)\.pre-commit-config\.ya?ml$/, 'git runs its hooks (pre-commit)'],
  [/(^|\/)\.(bashrc|bash_profile|profile|zshrc|zprofile|zshenv|login)$/, 'the shell runs it'],
  [/(^|\/)\.envrc$/, 'direnv runs it'],
  // A project's own agent settings: their hooks and MCP servers run when an agent next starts there.
  [/(^|\/)\.claude\/settings(\.local)?\.json$/, 'Claude Code runs its hooks'],
  [/(^|\/)\.mcp\.json$/, 'Claude Code starts its MCP servers'],
  [/(^|\/)\.(gemini|qwen)\/settings\.json$/, 'Gemini CLI and Qwen Code run its hooks and MCP servers'],
  [/(^|\/)\.codex\/config\.toml$/, 'Codex runs its MCP servers and notify program'],
  [/(^|\/)(\.opencode\/)?opencode\.jsonc?$|(^|\/)\.opencode\/plugins?\//, 'opencode runs its plugins and MCP servers'],
  [/(^|\/)\.vscode\/tasks\.json$/, 'VS Code runs its tasks (some when the folder opens)'],
  // A project's editor settings: the editor applies them when it opens the folder (Zed at once,
  // as they change), outside any sandbox — the language servers they name, buckley-lsp's own
  // settings (what an agent may do unasked) among them.
  [/(^|\/)\.zed\/(settings|tasks|debug)\.json$/, "Zed applies it: the language servers, tasks and MCP servers it names, buckley-lsp's own settings"],
  [/(^|\/)\.helix\/(languages|config)\.toml$/, 'Helix runs the language servers it names'],
  [/(^|\/)\.vscode\/settings\.json$/, 'VS Code applies it: the programs it names, agents\' approvals'],
  [/(^|\/)\.(nvim\.lua|nvimrc|exrc)$/, 'Neovim runs it (exrc)'],
  [/(^|\/)\.dir-locals(-2)?\.el$/, 'Emacs applies it to the files of its folder'],
  [/(^|\/)\.github\/workflows\/[^/]+\.ya?ml$|(^|\/)\.gitlab-ci\.ya?ml$/, "CI runs it, with the repository's secrets"],
];

/** Who runs a file later, outside any sandbox, by its path (a git hook, a project's editor settings); undefined where nothing does. */
export function runsLater(path: string): string | undefined {
  return PERSISTENT.find(([pattern]) => pattern.test(path))?.[1];
}

/** What secret a file holds by its name alone (`.env`, `id_ed25519`, `key.pem`, …); undefined for other names. */
export function credentialByName(name: string): string | undefined {
  if (NOT_CREDENTIALS.test(name)) return undefined;
  return CREDENTIAL_NAMES.find(([pattern]) => pattern.test(name))?.[1];
}

/** The credential files and directories of the user and the system, where they would be: absolute paths and what they hold. */
export function credentialPlaces(home: string): { path: string; what: string }[] {
  return [...HOME_CREDENTIALS.map(([relative, what]) => ({ path: join(home, relative), what })), ...SYSTEM_CREDENTIALS.map(([path, what]) => ({ path, what }))];
}

export function describePath(written: string, place: Place): PathFacts {
  const resolved = resolvePath(written, place);
  if (!resolved) return { written, inside: false };
  const facts: PathFacts = { written, resolved, inside: isInside(resolved, place.workspaceRoot) };
  const name = basename(resolved);
  const underHome = isInside(resolved, place.home) ? relative(realPath(place.home) ?? place.home, resolved) : undefined;
  if (/^\/proc\/[^/]+\/environ$/.test(resolved)) facts.credential = 'environment secrets';
  for (const [prefix, what] of HOME_CREDENTIALS) {
    if (underHome !== undefined && (underHome === prefix || underHome.startsWith(`${prefix}/`))) facts.credential = what;
  }
  for (const [prefix, what] of SYSTEM_CREDENTIALS) {
    if (resolved === prefix || resolved.startsWith(`${prefix}/`)) facts.credential = what;
  }
  facts.credential ??= credentialByName(name);
  const later = runsLater(resolved);
  if (later) facts.persistent = later;
  return facts;
}
