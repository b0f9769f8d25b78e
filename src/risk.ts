/**
 * How risky a tool call is, from its kind and parameters: reads are low; edits medium; shell
 * commands high; deleting, force-pushing, `rm -rf`, writing outside the workspace and the like
 * destructive. All the rules live here (table-tested in test/unit/risk.test.ts).
 */
import { isAbsolute, relative, resolve } from 'node:path';

export type Risk = 'low' | 'medium' | 'high' | 'destructive';
export const RISKS: readonly Risk[] = ['low', 'medium', 'high', 'destructive'];

export function riskAtMost(risk: Risk, limit: Risk | 'none'): boolean {
  return limit !== 'none' && RISKS.indexOf(risk) <= RISKS.indexOf(limit);
}

export interface ToolCallFacts {
  /** ACP tool kind: read, edit, delete, move, search, execute, think, fetch, switch_mode, other. */
  kind: string;
  /** Tool parameters, flattened to strings (`command`, `path`, …). */
  parameters: Record<string, string>;
  /** Absolute path of the workspace, when known: writes outside it are destructive. */
  workspaceRoot?: string;
}

/** Shell commands that destroy data or history, or hand the machine to someone else. */
const DESTRUCTIVE_COMMANDS: RegExp[] = [
  /\brm\s+(-[a-zA-Z]*[rRf][a-zA-Z]*\s+)+/, // rm -rf, rm -r, rm -f
  /\bgit\s+push\b.*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s\+\S)/,
  /\bgit\s+reset\s+--hard\b/,
  /\bgit\s+clean\s+-[a-zA-Z]*f/,
  /\bgit\s+(checkout|restore)\s+(--\s+)?\.(\s|$)/,
  /\bgit\s+branch\s+-D\b/,
  /\b(mkfs(\.\w+)?|shred|wipefs|fdisk|parted)\b/,
  /\bdd\b.*\bof=/,
  /\bchmod\s+(-R\s+)?0?777\b/,
  /\bchown\s+-R\b/,
  /\bsudo\b|\bdoas\b/,
  />\s*\/dev\/(sd|nvme|hd)/,
  /\b(curl|wget)\b[^|]*\|\s*(ba|z)?sh\b/,
  /\bdrop\s+(table|database|schema)\b/i,
  /\btruncate\s+table\b/i,
  /\bdelete\s+from\s+\w+\s*;?\s*$/i,
  /\bkubectl\s+delete\b/,
  /\bterraform\s+destroy\b/,
  /:\(\)\s*\{\s*:\|:&\s*\};:/,
];

const PATH_KEYS = ['path', 'file_path', 'filePath', 'file', 'filename', 'target', 'destination', 'dest', 'to', 'from', 'source', 'cwd', 'directory', 'dir'];
const COMMAND_KEYS = ['command', 'cmd', 'script', 'shell', 'commandLine'];

export function classifyRisk(call: ToolCallFacts): Risk {
  const command = commandOf(call.parameters);
  const kind = command && (call.kind === 'other' || call.kind === '') ? 'execute' : call.kind;
  const outside = pathsOf(call.parameters).some((path) => isOutside(path, call.workspaceRoot));
  switch (kind) {
    case 'read':
    case 'search':
    case 'think':
      // Reading outside the project (~/.ssh, /etc) is worth a question.
      return outside ? 'medium' : 'low';
    case 'fetch':
      return 'medium';
    case 'delete':
      return 'destructive';
    case 'edit':
    case 'move':
      return outside ? 'destructive' : 'medium';
    case 'execute':
      return command && DESTRUCTIVE_COMMANDS.some((pattern) => pattern.test(command)) ? 'destructive' : 'high';
    default:
      return outside ? 'destructive' : 'high';
  }
}

function commandOf(parameters: Record<string, string>): string | undefined {
  for (const key of COMMAND_KEYS) {
    const value = parameters[key];
    if (value) {
      // An argv array arrives JSON-encoded: join it back into a command line.
      if (value.startsWith('[')) {
        try {
          const argv: unknown = JSON.parse(value);
          if (Array.isArray(argv)) return argv.map(String).join(' ');
        } catch {
          // not JSON: take it as written
        }
      }
      return value + (parameters.args ? ` ${parameters.args}` : '');
    }
  }
  return undefined;
}

function pathsOf(parameters: Record<string, string>): string[] {
  return PATH_KEYS.map((key) => parameters[key]).filter((value): value is string => typeof value === 'string' && value.length > 0);
}

function isOutside(path: string, root: string | undefined): boolean {
  if (!root) return false;
  const absolute = isAbsolute(path) ? path : resolve(root, path);
  const rel = relative(root, absolute);
  return rel === '..' || rel.startsWith(`..${'/'}`) || isAbsolute(rel);
}
