/**
 * The variables an agent's own settings name, in each agent's way of naming them: found in the
 * settings as the agents write them, and only in the files of the agent known.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { namedVariables, namesIn, settingsOf, urlsIn } from '../../src/coordinator/agents/agentSettings.js';
import { knownByCommand } from '../../src/coordinator/agents/recognize.js';
import { GuardJournal } from '../../src/coordinator/agents/guardJournal.js';
import { watchGuarded } from '../../src/coordinator/agents/guardedState.js';
import type { Logger } from '../../src/logger.js';
import { tempDir } from '../helpers/temp.js';

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined } as unknown as Logger;

describe('what an agent’s own settings need: the variables they name, the servers they point at', () => {
  it.each([
    ['Claude Code (~/.claude.json, ${VAR} and ${VAR:-default})', '{"mcpServers":{"gh":{"env":{"T":"${GITHUB_TOKEN}","U":"${SENTRY_AUTH_TOKEN:-none}"}}}}', ['GITHUB_TOKEN', 'SENTRY_AUTH_TOKEN']],
    ['Gemini CLI and Qwen Code ($VAR inside a string)', '{"mcpServers":{"gh":{"headers":{"Authorization":"Bearer $GITLAB_TOKEN"}}}}', ['GITLAB_TOKEN']],
    ['opencode and Kilo ({env:VAR})', '{"provider":{"deep":{"options":{"apiKey":"{env:DEEPSEEK_KEY}"}}}}', ['DEEPSEEK_KEY']],
    ['Codex (env_key, bearer_token_env_var, env_vars)', '[model_providers.azure]\nenv_key = "AZURE_OPENAI_API_KEY"\n[mcp_servers.gh]\nbearer_token_env_var = "GH_PAT"\nenv_vars = ["LINEAR_API_KEY", "NOTION_TOKEN"]\n', ['AZURE_OPENAI_API_KEY', 'GH_PAT', 'LINEAR_API_KEY', 'NOTION_TOKEN']],
  ])('%s', (_agent, text, names) => {
    expect(namesIn(text).sort()).toEqual([...names].sort());
  });

  it("finds the remote MCP servers' URLs, in JSON and TOML", () => {
    expect(urlsIn('{"mcpServers":{"a":{"httpUrl":"https://a.example/mcp"},"b":{"url":"https://b.example/sse"},"c":{"command":"c"}}}')).toEqual(['https://a.example/mcp', 'https://b.example/sse']);
    expect(urlsIn('[mcp_servers.linear]\nurl = "https://mcp.linear.app/mcp"\n')).toEqual(['https://mcp.linear.app/mcp']);
  });

  it('names nothing where the settings give values, not names', () => {
    expect(namesIn('{"mcpServers":{"x":{"command":"x","env":{"TOKEN":"literal-value"}}},"price":"5$"}')).toEqual([]);
  });

  it("reads the known agent's settings the sandbox keeps as the user wrote them: a read-only file whole, a file it writes itself at its guarded keys only", () => {
    const home = tempDir('buckley-named');
    mkdirSync(join(home, '.gemini'));
    writeFileSync(join(home, '.gemini', 'settings.json'), '{"mcpServers":{"gh":{"env":{"T":"$GITHUB_TOKEN"}}}}');
    // Claude Code writes ~/.claude.json itself: a name outside its MCP servers may be the agent's doing.
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ mcpServers: { sentry: { env: { T: '${SENTRY_TOKEN}' } } }, tipsHistory: { x: '${AWS_SECRET_ACCESS_KEY}' } }));
    const env = { HOME: home };
    expect(namedVariables(settingsOf(knownByCommand(['gemini', '--acp']), env))).toEqual([{ name: 'GITHUB_TOKEN', file: join(home, '.gemini', 'settings.json') }]);
    expect(namedVariables(settingsOf(knownByCommand(['claude-agent-acp']), env))).toEqual([{ name: 'SENTRY_TOKEN', file: join(home, '.claude.json') }]);
    expect(settingsOf(undefined, env)).toEqual([]);
  });

  it('reads them as they stood before the turns under way (the guard’s journal): a name a turn wrote, or a settings file it made, counts for nothing until the turn is checked and it is undone', () => {
    const [home, folder] = [tempDir('buckley-named'), tempDir('buckley-journal')];
    const claudeJson = join(home, '.claude.json');
    writeFileSync(claudeJson, JSON.stringify({ mcpServers: { sentry: { env: { T: '${SENTRY_TOKEN}' } } } }));
    const env = { HOME: home };
    const claude = knownByCommand(['claude-agent-acp'])!;
    const journal = new GuardJournal(folder, silent);
    journal.prepare();
    const turn = watchGuarded(claude.runsCode!(env), claude.runsCodeIn!(env), () => 'Claude Code', silent, journal.record());
    // The agent, during the turn: a server of its own naming another secret, and a settings file made.
    writeFileSync(claudeJson, JSON.stringify({ mcpServers: { sentry: { env: { T: '${SENTRY_TOKEN}' } }, evil: { env: { K: '${AWS_SECRET_ACCESS_KEY}' } } } }));
    mkdirSync(join(home, '.claude'), { recursive: true });
    writeFileSync(join(home, '.claude', 'settings.json'), '{"env":{"X":"${GITHUB_TOKEN}"}}');
    const names = () => namedVariables(settingsOf(claude, env, journal.beforeTurns())).map(({ name }) => name);
    expect(names()).toEqual(['SENTRY_TOKEN']);
    // Without the journal's word, the turn's writes would count.
    expect(namedVariables(settingsOf(claude, env)).map(({ name }) => name).sort()).toEqual(['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'SENTRY_TOKEN']);
    turn.check();
    expect(names()).toEqual(['SENTRY_TOKEN']);
  });
});
