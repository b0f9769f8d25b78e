import { describeValue, flattenParameters } from '../../src/coordinator/agents/acpMessages.js';
import { describe, expect, it } from 'vitest';
import { errorLine, errorText, inWords, remedy } from '../../src/coordinator/agents/acpErrors.js';

/** What agents that fail to start write on stderr, as their runtimes print it. */
describe("an agent's error line", () => {
  it("is Node's error, not the stack under it or the version after it", () => {
    const stderr = [
      'node:internal/modules/cjs/loader:1228',
      '  throw err;',
      '  ^',
      '',
      "Error: Cannot find module '/opt/agent/index.js'",
      '    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)',
      '    at Module._load (node:internal/modules/cjs/loader:1051:27)',
      '  code: \'MODULE_NOT_FOUND\',',
      '  requireStack: []',
      '}',
      '',
      'Node.js v20.19.2',
    ];
    expect(errorLine(stderr)).toBe("Error: Cannot find module '/opt/agent/index.js'");
  });

  it("is Python's exception, below its traceback", () => {
    const stderr = ['Traceback (most recent call last):', '  File "/opt/agent/main.py", line 1, in <module>', '    import acp', "ModuleNotFoundError: No module named 'acp'"];
    expect(errorLine(stderr)).toBe("ModuleNotFoundError: No module named 'acp'");
  });

  it("is Go's panic and Rust's error", () => {
    expect(errorLine(['panic: open config.toml: no such file or directory', '', 'goroutine 1 [running]:', 'main.main()', '\t/src/main.go:12 +0x1d'])).toBe(
      'panic: open config.toml: no such file or directory',
    );
    expect(errorLine(['Error: missing API key: set GEMINI_API_KEY'])).toBe('Error: missing API key: set GEMINI_API_KEY');
  });

  it('is the last plain line when nothing looks like an error', () => {
    expect(errorLine(['starting up', 'GEMINI_API_KEY is not set, exiting'])).toBe('GEMINI_API_KEY is not set, exiting');
    expect(errorLine([])).toBeUndefined();
  });
});

/** What the real agents put where, when the model's API refuses their key (seen running them). */
describe("an agent's failure in words", () => {
  const codex = { acpName: 'codex-acp', command: ['codex-acp'], title: 'Codex' };

  it("takes the reason from the JSON-RPC error's data where the message says nothing", () => {
    expect(errorText({ code: -32603, message: 'Internal error', data: { details: 'unexpected status 401 Unauthorized: invalid api key' } })).toBe('unexpected status 401 Unauthorized: invalid api key');
    expect(errorText({ code: -32603, message: 'Internal error', data: 'stream disconnected' })).toBe('stream disconnected');
    expect(errorText({ code: -32000, message: 'Authentication required' })).toBe('Authentication required');
  });

  it("reads a model API's JSON error inside the message: its status and words, not the JSON", () => {
    const gemini = 'Error when talking to Gemini API: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}';
    expect(errorText(new Error(gemini))).toBe('Error when talking to Gemini API: 401 UNAUTHENTICATED API key not valid. Please pass a valid API key.');
    expect(errorText(new Error('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'))).toBe('authentication_error invalid x-api-key');
  });

  it('names the key of a refused 401 and where to give it', () => {
    expect(inWords('Codex failed', { code: -32603, message: 'Internal error', data: { details: 'unexpected status 401 Unauthorized' } }, codex)).toBe(
      'Codex failed: unexpected status 401 Unauthorized. To fix it, the model\'s API refused Codex\'s key: give it OPENAI_API_KEY (or CODEX_API_KEY) with buckley.agent.env (e.g. {"OPENAI_API_KEY": "…"}) or in the environment buckley-lsp starts in, or run `codex login` in a terminal',
    );
    expect(remedy('connection refused', codex)).toBeUndefined();
  });
});

describe('a generic prefix', () => {
  it('is dropped where the reason follows it', () => {
    expect(errorText({ code: -32603, message: 'Internal error: Invalid API key · Fix external API key' })).toBe('Invalid API key · Fix external API key');
  });
});

describe('a variable the agent misses', () => {
  it('is named, with where to give it', () => {
    expect(remedy('Missing environment variable: `OPENAI_API_KEY`.', { command: ['codex-acp'], title: 'Codex' })).toBe(
      'give Codex OPENAI_API_KEY with buckley.agent.env (e.g. {"OPENAI_API_KEY": "…"}) or in the environment buckley-lsp starts in',
    );
    expect(remedy('GEMINI_API_KEY is not set', { command: ['gemini'], title: 'Gemini CLI' })).toMatch(/^give Gemini CLI GEMINI_API_KEY with buckley.agent.env/);
  });
});

describe("an agent's tool input or output nested past any stack (an agent that writes its JSON itself)", () => {
  it('is said to be so, not thrown: its turn goes on', () => {
    let deep: unknown = {};
    for (let i = 0; i < 200_000; i++) deep = { x: deep };
    expect(flattenParameters({ path: 'a.ts', options: deep })).toEqual({ path: 'a.ts', options: '(nested too deep to show)' });
    expect(describeValue(deep)).toBe('(nested too deep to show)');
    expect(describeValue({ command: ['ls'] })).toBe('{"command":["ls"]}');
  });
});
