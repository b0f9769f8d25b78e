import { describe, expect, it } from 'vitest';
import { doctorUsage, needsSettings, parseArgs as parseWith, usage } from '../../src/args.js';
import { settings } from '../../src/config.js';

const parseArgs = (argv: string[]) => parseWith(argv, settings);

describe('the command line', () => {
  it('takes every setting as a flag, typed as the setting is', () => {
    const parsed = parseArgs(['--context.maxBytes', '100000', '--approvals.autoApprove=medium', '--answers.hover', 'false', '--agent.command', 'gemini --acp']);
    expect(parsed.error).toBeUndefined();
    expect(parsed.config).toEqual({ context: { maxBytes: 100000 }, approvals: { autoApprove: 'medium' }, answers: { hover: false }, agent: { command: 'gemini --acp' } });
  });

  it('takes a map setting as NAME=VALUE, once per entry', () => {
    expect(parseArgs(['--agent.env', 'BUCKLEY_AGENT=/p/a.yaml', '--agent.env=KEY=v=1']).config).toEqual({ agent: { env: { BUCKLEY_AGENT: '/p/a.yaml', KEY: 'v=1' } } });
    expect(parseArgs(['--agent.env', 'KEY']).error).toBe('--agent.env takes NAME=VALUE, not KEY');
  });

  it('collects a list setting given more than once, or as a JSON list, for the server and the coordinator', () => {
    const writable = { agent: { sandbox: { writable: ['/a', '/b', '/c'] } } };
    expect(parseArgs(['--agent.sandbox.writable', '/a', '--agent.sandbox.writable=/b', '--agent.sandbox.writable', '["/c"]']).config).toEqual(writable);
    const coordinator = parseArgs(['coordinator', '--agent.sandbox.writable=/a', '--agent.sandbox.writable', '["/b","/c"]', '--agent', 'gemini', '--acp']);
    expect(coordinator.error).toBeUndefined();
    expect(coordinator.config).toEqual({ agent: { ...writable.agent, driver: 'acp', command: ['gemini', '--acp'] } });
    expect(parseArgs(['--agent.sandbox.writable', '[oops']).error).toBe('--agent.sandbox.writable takes a value (again for more) or a JSON list, not [oops');
  });

  it("takes a team coordinator's flags, each checked, for the coordinator only", () => {
    const parsed = parseArgs(['coordinator', '--nats', 'nats://a:4222,nats://b:4222', '--replica', 'r1', '--max-running', '0', '--roots', '/srv/a,/srv/b', '--metrics', '127.0.0.1:9464']);
    expect(parsed.error).toBeUndefined();
    expect(parsed.team).toEqual({ nats: ['nats://a:4222', 'nats://b:4222'], replica: 'r1', maxRunning: 0, roots: ['/srv/a', '/srv/b'], metrics: '127.0.0.1:9464' });
    expect(parseArgs(['coordinator', '--metrics', '[::1]:0']).team).toEqual({ metrics: '[::1]:0' });
    expect(parseArgs(['coordinator', '--nats', 'nats://a:4222', '--nats-wait', '30']).team).toEqual({ nats: ['nats://a:4222'], natsWaitS: 30 });
    expect(parseArgs(['coordinator', '--nats', 'nats://team:pw@a:4222', '--nats-creds', '/etc/buckley/team.creds']).team).toEqual({ nats: ['nats://team:pw@a:4222'], natsCreds: '/etc/buckley/team.creds' });
    expect(parseArgs(['--nats-creds', 'x.creds']).error).toBe('--nats-creds is for `buckley-lsp coordinator`');
    expect(parseArgs(['coordinator', '--nats-wait', '0']).error).toBe('--nats-wait takes a whole number of at least 1, not 0');
    expect(parseArgs(['coordinator', '--metrics', '9464']).error).toBe('--metrics takes where to serve them, HOST:PORT (127.0.0.1:9464), not 9464');
    expect(parseArgs(['coordinator', '--roots', 'src']).error).toBe('--roots takes the folders whose workspaces it serves, absolute, comma-separated (/srv/checkouts), not src');
    expect(parseArgs(['--metrics', '127.0.0.1:9464']).error).toBe('--metrics is for `buckley-lsp coordinator`');
  });

  it('leaves a value of the wrong type as given, for the settings check to name the type expected', () => {
    expect(parseArgs(['--context.maxBytes', 'lots']).config).toEqual({ context: { maxBytes: 'lots' } });
  });

  it('says "did you mean" for a misspelt flag', () => {
    expect(parseArgs(['--context.maxbytes', '3']).error).toBe('unknown argument --context.maxbytes; did you mean --context.maxBytes?');
    expect(parseArgs(['doctor', '--agent.comand=x']).error).toBe('unknown argument --agent.comand=x; did you mean --agent.command?');
  });

  it('says which flag lacks its value', () => {
    expect(parseArgs(['--log.level']).error).toBe('--log.level needs a value');
  });

  it('takes --settings FILE for doctor only', () => {
    expect(parseArgs(['doctor', '--settings', 'editor.json'])).toMatchObject({ mode: 'doctor', settingsFile: 'editor.json' });
    expect(parseArgs(['--settings', 'editor.json']).error).toContain('--settings is for `buckley-lsp doctor`');
  });

  it('gives doctor its own help', () => {
    expect(parseArgs(['doctor', '--help'])).toMatchObject({ mode: 'help', helpFor: 'doctor' });
    expect(parseArgs(['--help'])).toMatchObject({ mode: 'help', helpFor: 'server' });
    expect(doctorUsage(settings())).toContain('buckley-lsp doctor [--settings FILE]');
  });

  it("--help names every setting, initializationOptions and where each is explained (docs/configuration.md)", () => {
    const text = usage(settings());
    for (const { key } of settings()) expect(text).toContain(`--${key} `);
    expect(text).toContain('initializationOptions');
    expect(text).toContain("docs/configuration.md");
  });

  it('parses its own flags without the settings, and says when a command line needs them', () => {
    const none = () => {
      throw new Error('the settings were needed');
    };
    for (const argv of [['--stdio'], ['--stdio', '--coordinator', '127.0.0.1:1', '--log-level=debug', '--log-file', 'off'], ['coordinator', '--listen', '127.0.0.1:0'], ['--agent', 'gemini --acp']]) {
      expect(needsSettings(argv)).toBe(false);
      expect(parseWith(argv, none).error).toBeUndefined();
    }
    expect(parseWith(['--stdio', '--coordinator', '127.0.0.1:1'], none).config).toEqual({ coordinator: { address: '127.0.0.1:1' } });
    for (const argv of [['--context.maxBytes', '5'], ['--help'], ['-h'], ['--nonsense'], ['--stdio', '--answers.hover=false']]) expect(needsSettings(argv)).toBe(true);
  });
});
