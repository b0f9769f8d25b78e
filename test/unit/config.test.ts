import { describe, expect, it } from 'vitest';
import { configFromEnv, resolveConfigLeniently, defaultConfig, describeProblems, resolveConfig, splitCommandLine } from '../../src/config.js';

describe('config', () => {
  it('has these defaults', () => {
    expect(defaultConfig).toMatchInlineSnapshot(`
      {
        "agent": {
          "cancelGraceMs": 5000,
          "driver": "auto",
          "editorTools": true,
          "maxIdleSessions": 4,
          "modes": {},
          "openai": {
            "apiKeyEnv": "OPENAI_API_KEY",
            "baseUrl": "http://127.0.0.1:11434/v1",
          },
          "passEnv": [],
          "requestTimeoutMs": 30000,
          "sandbox": {
            "enabled": true,
            "network": {
              "allow": [],
              "allowInTasks": [],
              "confine": true,
            },
            "show": [],
            "writable": [],
          },
          "silenceMs": 30000,
        },
        "answers": {
          "hover": true,
          "showDocument": true,
          "showMessage": true,
        },
        "approvals": {
          "autoApprove": "low",
          "timeoutMs": 300000,
        },
        "ask": {
          "requireReadOnly": false,
          "timeoutMs": 180000,
        },
        "completions": {
          "debounceMs": 0,
          "enabled": true,
          "maxBytes": 8000,
          "timeoutMs": 10000,
        },
        "context": {
          "includeOpenDocuments": true,
          "maxBytes": 250000,
        },
        "coordinator": {
          "callTimeoutMs": 10000,
        },
        "limits": {
          "maxConcurrent": 128,
        },
        "log": {
          "level": "info",
        },
        "task": {
          "timeoutMs": 1800000,
        },
      }
    `);
  });

  it('merges sources key by key, later sources winning', () => {
    const result = resolveConfig([
      { name: 'environment', values: configFromEnv({ BUCKLEY_COORDINATOR: '127.0.0.1:50051', BUCKLEY_AGENT: 'gemini --acp', BUCKLEY_LOG: 'debug' }) },
      { name: 'initializationOptions', values: { context: { maxBytes: 4096 }, log: { level: 'warn' } } },
      { name: 'workspace/configuration', values: { context: { includeOpenDocuments: false } } },
    ]);
    expect(result).toMatchObject({
      ok: true,
      config: {
        coordinator: { address: '127.0.0.1:50051' },
        agent: { driver: 'acp', command: ['gemini', '--acp'] },
        context: { maxBytes: 4096, includeOpenDocuments: false },
        log: { level: 'warn' },
      },
    });
  });

  it("takes an empty list for an empty object where the settings have one (Lua's `{}`, as Neovim sends it); a list setting's stays a list", () => {
    const result = resolveConfig([
      { name: 'initializationOptions', values: [] },
      { name: 'workspace/configuration', values: { agent: { env: [], mcpServers: [], sandbox: { writable: [] } }, context: [] } },
    ]);
    expect(result).toMatchObject({ ok: true, config: { agent: { env: {}, mcpServers: {}, sandbox: { writable: [] } }, context: defaultConfig.context } });
    const listed = resolveConfig([{ name: 'workspace/configuration', values: { agent: { command: [] } } }]);
    expect(listed.ok).toBe(false);
  });

  it('names the key and the source of a bad value', () => {
    const result = resolveConfig([
      { name: 'initializationOptions', values: { context: { maxBytes: 'lots' } } },
      { name: 'workspace/configuration', values: { coordinator: { address: 'localhost' } } },
    ]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(describeProblems(result.problems)).toBe(
      'buckley.context.maxBytes (from initializationOptions): expected a number, not a string ("lots"); ' +
        'buckley.coordinator.address (from workspace/configuration): expected host:port (or several, comma-separated), e.g. 127.0.0.1:50051, not "localhost"',
    );
    expect(result.problems.map((problem) => problem.summary)).toEqual(['buckley.context.maxBytes: expected a number', 'buckley.coordinator.address: expected host:port (or several, comma-separated), e.g. 127.0.0.1:50051']);
  });

  it('reports a misspelt key, by its own name, instead of ignoring it, and says what was meant', () => {
    const result = resolveConfig([{ name: 'workspace/configuration', values: { context: { maxByte: 10 }, agent: { comand: 'x', openAI: {} }, agnet: {} } }]);
    if (result.ok) throw new Error('accepted');
    expect(result.problems.map(({ key, message, summary }) => ({ key, message, summary })).sort((a, b) => a.key.localeCompare(b.key))).toEqual([
      { key: 'buckley.agent.comand', message: 'not a setting; did you mean buckley.agent.command?', summary: 'buckley.agent.comand: did you mean command?' },
      { key: 'buckley.agent.openAI', message: 'not a setting; did you mean buckley.agent.openai?', summary: 'buckley.agent.openAI: did you mean openai?' },
      { key: 'buckley.agnet', message: 'not a setting; did you mean buckley.agent?', summary: 'buckley.agnet: did you mean agent?' },
      { key: 'buckley.context.maxByte', message: 'not a setting; did you mean buckley.context.maxBytes?', summary: 'buckley.context.maxByte: did you mean maxBytes?' },
    ]);
    expect(resolveConfig([{ name: 'flags', values: { ask: { zzz: 1 } } }])).toMatchObject({ problems: [{ message: 'not a setting (docs/configuration.md lists the settings)' }] });
  });

  it.each([
    [{ approvals: { autoApprove: 'hgih' } }, 'buckley.approvals.autoApprove: expected none, low, medium or high', 'expected none, low, medium or high, not "hgih"'],
    [{ ask: { timeoutMs: 1.5 } }, 'buckley.ask.timeoutMs: expected a whole number', 'expected a whole number, not a number (1.5)'],
    [{ context: { maxBytes: 10 } }, 'buckley.context.maxBytes: must be at least 1024', 'must be at least 1024, not 10'],
    [{ answers: { hover: 'yes' } }, 'buckley.answers.hover: expected true or false', 'expected true or false, not a string ("yes")'],
    [{ agent: { command: 42 } }, 'buckley.agent.command: expected a command line or a list', 'expected a command line ("gemini --acp") or a list (["gemini", "--acp"]), not 42'],
    [{ agent: { openai: { baseUrl: 'localhost:11434' } } }, 'buckley.agent.openai.baseUrl: expected a URL such as http://127.0.0.1:11434/v1', 'expected a URL such as http://127.0.0.1:11434/v1, not "localhost:11434"'],
  ])('says what %j should be', (values, summary, message) => {
    const result = resolveConfig([{ name: 'workspace/configuration', values }]);
    expect(result).toMatchObject({ ok: false, problems: [{ summary, message }] });
  });

  it('leaves out only the bad keys when settings come from the editor: the rest applies', () => {
    const { config, problems } = resolveConfigLeniently([
      { name: 'command line', values: { context: { maxBytes: 9000 } } },
      {
        name: 'initializationOptions',
        values: { agent: { command: 'gemini --acp' }, context: { maxBytes: 'lots', maxByte: 1 }, answers: { hover: false } },
      },
    ]);
    expect(problems.map((problem) => `${problem.key} (${problem.source})`).sort()).toEqual([
      'buckley.context.maxByte (initializationOptions)',
      'buckley.context.maxBytes (initializationOptions)',
    ]);
    // The agent command and the hover setting apply; maxBytes comes from the next source down.
    expect(config.agent.command).toEqual(['gemini', '--acp']);
    expect(config.answers.hover).toBe(false);
    expect(config.context.maxBytes).toBe(9000);
  });

  it('leaves out a section whose keys only make sense together (tls.cert without tls.key)', () => {
    const { config, problems } = resolveConfigLeniently([
      { name: 'workspace/configuration', values: { coordinator: { agentId: 'me', tls: { cert: '/c.pem' } } } },
    ]);
    expect(problems).toMatchObject([{ key: 'buckley.coordinator.tls', message: 'cert and key go together (mutual TLS needs both)' }]);
    expect(config.coordinator.agentId).toBe('me');
    expect(config.coordinator.tls).toBeUndefined();
  });

  it('rejects a bad log level from the environment', () => {
    const result = resolveConfig([{ name: 'environment', values: configFromEnv({ BUCKLEY_LOG: 'loud' }) }]);
    expect(result).toMatchObject({ ok: false, problems: [{ key: 'buckley.log.level', source: 'environment' }] });
  });

  it.each([
    ['buckley acp', ['buckley', 'acp']],
    ['node "my agent.js"  --flag', ['node', 'my agent.js', '--flag']],
    ["npx -y '@zed-industries/claude-code-acp'", ['npx', '-y', '@zed-industries/claude-code-acp']],
    ['run ""', ['run', '']],
  ])('splits the command line %j', (line, argv) => {
    expect(splitCommandLine(line)).toEqual(argv);
  });
});

describe('ollamaBaseUrl', async () => {
  const { ollamaBaseUrl } = await import('../../src/coordinator/agents/choose.js');
  it.each([
    [undefined, 'http://127.0.0.1:11434/v1'],
    ['127.0.0.1:8080', 'http://127.0.0.1:8080/v1'],
    ['0.0.0.0', 'http://127.0.0.1:11434/v1'],
    ['http://localhost:11435', 'http://localhost:11435/v1'],
    ['[::1]:11434', 'http://[::1]:11434/v1'],
    ['gpu-box.internal:11434', undefined],
  ])('OLLAMA_HOST=%j → %j (loopback only)', (value, expected) => {
    expect(ollamaBaseUrl({ OLLAMA_HOST: value })).toBe(expected);
  });
});

describe("the settings `initialize`'s answer depends on, read without the schema", async () => {
  const { negotiatedSettings, serverSources } = await import('../../src/configSources.js');
  const negotiated = (config: typeof defaultConfig) => ({
    answers: { showDocument: config.answers.showDocument, hover: config.answers.hover, showMessage: config.answers.showMessage },
    completions: { enabled: config.completions.enabled },
  });
  const sourcesWith = (cli: unknown, initializationOptions: unknown) => {
    const sources = serverSources({}, cli);
    sources[2]!.values = initializationOptions;
    return sources;
  };
  it.each([
    ['nothing set', undefined, undefined],
    ['flags, then initializationOptions over them', { completions: { enabled: false }, answers: { hover: false } }, { completions: { enabled: true } }],
    ['a value of another type left out', { answers: { hover: false } }, { answers: { hover: 'no', showDocument: false } }],
    ['a section that is not an object left out', { answers: { showMessage: false } }, { answers: 'none', completions: [] }],
    ['a null section, a null source', { completions: null }, null],
    ['a misspelt key beside a good one', undefined, { answers: { hovr: false, showMessage: false }, completions: { enabled: false, debounceMs: -5 } }],
    ['other sections and wrapping', { log: { level: 'loud' } }, { buckley: { completions: { enabled: false } }, fromUser: true, answers: { showDocument: false } }],
  ])('as the schema resolves them: %s', (_name, cli, initializationOptions) => {
    const sources = sourcesWith(cli, initializationOptions);
    expect(negotiatedSettings(sources)).toEqual(negotiated(resolveConfigLeniently(sources).config));
  });
});
