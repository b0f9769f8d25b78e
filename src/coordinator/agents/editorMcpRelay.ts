/**
 * dist/buckley-lsp-editor-mcp.js: the editor MCP server (coordinator/agents/editorMcp.ts) for an
 * agent that takes only stdio MCP servers. It relays each line (MCP's stdio transport: one
 * JSON-RPC message per line) to the server's URL with the secret, both from its environment, and
 * writes the answers back a line each. It ends when its input does.
 */
import { EDITOR_MCP_SECRET_ENV, EDITOR_MCP_URL_ENV } from './editorMcpNames.js';

/** A message's line at most; a longer one is dropped (answered with an error when it has an id). */
const MAX_LINE_BYTES = 1024 * 1024;
/** A call may wait for the user (a read outside the workspace asks first): generous, but not for ever. */
const CALL_DEADLINE_MS = 15 * 60_000;

const url = process.env[EDITOR_MCP_URL_ENV];
const secret = process.env[EDITOR_MCP_SECRET_ENV];
if (!url || !secret) {
  process.stderr.write(`buckley-lsp-editor-mcp: ${EDITOR_MCP_URL_ENV} and ${EDITOR_MCP_SECRET_ENV} must be set (the coordinator sets them for its agent)\n`);
  process.exit(2);
}

// Its stdout is MCP's stdio transport: JSON-RPC messages, one per line, and nothing else.
const write = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
const idOf = (line: string): string | number | undefined => {
  try {
    const id = (JSON.parse(line) as { id?: unknown }).id;
    return typeof id === 'string' || typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
};
const failed = (line: string, message: string) => {
  const id = idOf(line);
  if (id !== undefined) write({ jsonrpc: '2.0', id, error: { code: -32000, message } });
};

async function relay(line: string): Promise<void> {
  try {
    const response = await fetch(url!, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: line,
      signal: AbortSignal.timeout(CALL_DEADLINE_MS),
    });
    const body = await response.text();
    if (response.status === 202) return;
    if (!response.ok) return failed(line, `buckley-lsp's editor server answered ${response.status}: ${body.slice(0, 200)}`);
    // Written as one line of JSON, whatever the body's layout; a body that is not JSON is an error.
    let answer: unknown;
    try {
      answer = JSON.parse(body);
    } catch {
      return failed(line, `buckley-lsp's editor server answered with something other than JSON: ${body.slice(0, 200)}`);
    }
    write(answer);
  } catch (error) {
    failed(line, `buckley-lsp's editor server did not answer: ${(error as Error).message}`);
  }
}

let pending = '';
let dropping = false;
const inFlight = new Set<Promise<void>>();
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  pending += chunk;
  for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
    const line = pending.slice(0, newline).trim();
    pending = pending.slice(newline + 1);
    if (dropping) {
      dropping = false;
      continue;
    }
    if (!line) continue;
    const call = relay(line).finally(() => inFlight.delete(call));
    inFlight.add(call);
  }
  if (Buffer.byteLength(pending) > MAX_LINE_BYTES) {
    failed(pending, `a message may be at most ${MAX_LINE_BYTES} bytes`);
    pending = '';
    dropping = true;
  }
});
process.stdin.on('end', () => void Promise.all(inFlight).then(() => process.exit(0)));
