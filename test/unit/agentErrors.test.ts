import { describe, expect, it } from 'vitest';
import { errorLine } from '../../src/coordinator/agents/acpErrors.js';

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
