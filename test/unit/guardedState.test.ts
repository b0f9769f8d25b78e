/**
 * What runs code later in an agent's state, watched through a turn (src/coordinator/agents/guardedState.ts):
 * a guarded file or folder made in the turn is moved aside; a new folder in a guarded folder (an
 * extension) too, but not a file of the agent's own there; guarded keys of a JSON state file the
 * turn changed are put back — also where the turn made the file — and the rest of what it wrote stays,
 * read as the agents read them (comments, trailing commas, a key given twice: the last counts); a
 * file the turn left unreadable is put back whole, what it left moved aside.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { watchGuarded } from '../../src/coordinator/agents/guardedState.js';
import type { Logger } from '../../src/logger.js';
import { tempDir } from '../helpers/temp.js';

function logger(): Logger & { said: string[] } {
  const said: string[] = [];
  const log = (message: string) => said.push(message);
  return { said, error: log, warn: log, info: log, debug: log } as unknown as Logger & { said: string[] };
}

describe('what runs code later in an agent state', () => {
  it('moves aside a guarded file and an extension folder the turn made; keeps its own file in the guarded folder', () => {
    const state = tempDir('buckley-guarded');
    mkdirSync(join(state, 'extensions', 'mine'), { recursive: true });
    const log = logger();
    const { check } = watchGuarded([join(state, 'settings.json'), join(state, 'extensions/*')], [], () => 'Agent', log);
    writeFileSync(join(state, 'settings.json'), '{"hooks": {}}');
    mkdirSync(join(state, 'extensions', 'new-one'));
    writeFileSync(join(state, 'extensions', 'enablement.json'), '{}');
    check();
    expect(existsSync(join(state, 'settings.json'))).toBe(false);
    expect(readdirSync(state).some((name) => name.startsWith('settings.json.buckley-moved-'))).toBe(true);
    const extensions = readdirSync(join(state, 'extensions')).sort();
    expect(extensions.slice(0, 2)).toEqual(['enablement.json', 'mine']);
    expect(extensions.slice(2)).toEqual([expect.stringMatching(/^new-one\.buckley-moved-/)]);
    expect(log.said).toHaveLength(2);
    expect(log.said[0]).toContain(`${join(state, 'settings.json')} was made while Agent worked in its sandbox; what it names would run outside any sandbox when you next start Agent: moved aside to`);
  });

  it("keeps a place the turn made whose every file the user approved (written through the coordinator); one with a file more is moved aside whole, saying who applies it", () => {
    const project = tempDir('buckley-guarded');
    const [zed, helix] = [join(project, '.zed'), join(project, '.helix')];
    const log = logger();
    const { check } = watchGuarded([zed, helix], [], () => 'Agent', log);
    mkdirSync(zed);
    writeFileSync(join(zed, 'tasks.json'), '[]');
    mkdirSync(join(helix, 'runtime'), { recursive: true });
    writeFileSync(join(helix, 'languages.toml'), '');
    writeFileSync(join(helix, 'runtime', 'x.scm'), '');
    const approved = new Set([join(zed, 'tasks.json'), join(helix, 'languages.toml')]);
    check((path) => approved.has(path));
    expect(readFileSync(join(zed, 'tasks.json'), 'utf8')).toBe('[]');
    expect(existsSync(helix)).toBe(false);
    expect(log.said).toEqual([expect.stringContaining(`${helix} was made while Agent worked in its sandbox; Helix runs the language servers it names — outside any sandbox: moved aside to`)]);
  });

  it("puts back the guarded keys a turn changed, in a file it made too, and keeps the rest it wrote; read as the agents read them: with comments (kept), a key given twice", () => {
    const state = tempDir('buckley-guarded');
    const settings = join(state, 'settings.json');
    const made = join(state, 'made.json');
    const commented = join(state, 'commented.jsonc');
    const twice = join(state, 'twice.json');
    writeFileSync(settings, JSON.stringify({ starts: 1, mcp: { mine: { command: ['mine'] } }, projects: { '/w': { allowed: [] } } }));
    writeFileSync(commented, '// mine\n{"mcp": {}}\n');
    writeFileSync(twice, '{"mcp": {}}');
    const log = logger();
    const guards = [settings, made, commented, twice].map((file) => ({ file, keys: ['mcp', 'projects.*.allowed'] }));
    const { check } = watchGuarded([], guards, () => 'Agent', log);
    writeFileSync(settings, JSON.stringify({ starts: 2, mcp: { mine: { command: ['mine'] }, evil: { command: ['sh'] } }, projects: { '/w': { allowed: ['Bash(*)'] }, '/new': { allowed: [] } } }));
    writeFileSync(made, JSON.stringify({ $schema: 'x', mcp: { evil: { command: ['sh'] } } }));
    writeFileSync(commented, '// mine\n{"mcp": {"evil": {}}, /* the agent\'s */ "starts": 3,}\n');
    writeFileSync(twice, '{"mcp": {}, "mcp": {"evil": {"command": ["sh"]}}}');
    check();
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({ starts: 2, mcp: { mine: { command: ['mine'] } }, projects: { '/w': { allowed: [] }, '/new': { allowed: [] } } });
    expect(JSON.parse(readFileSync(made, 'utf8'))).toEqual({ $schema: 'x', mcp: {} });
    expect(readFileSync(commented, 'utf8')).toBe('// mine\n{"mcp": {}, /* the agent\'s */ "starts": 3,}\n');
    expect(JSON.parse(readFileSync(twice, 'utf8'))).toEqual({ mcp: {} });
    expect(log.said.join('\n')).toContain(`mcp.evil, projects./w.allowed in ${settings} changed while Agent worked in its sandbox`);
    expect(log.said.join('\n')).toContain(`mcp.evil in ${made} changed while Agent worked in its sandbox`);
    expect(log.said.join('\n')).toContain(`mcp.evil in ${commented} changed while Agent worked in its sandbox`);
  });

  it('puts back a flag the turn set (a folder trusted), and says nothing of one it wrote unset (a new project)', () => {
    const settings = join(tempDir('buckley-guarded'), 'settings.json');
    writeFileSync(settings, JSON.stringify({ projects: { '/w': { trusted: false }, '/mine': { trusted: true } } }));
    const log = logger();
    const { check } = watchGuarded([], [{ file: settings, keys: ['projects.*.trusted'] }], () => 'Agent', log);
    writeFileSync(settings, JSON.stringify({ projects: { '/w': { trusted: true }, '/mine': { trusted: true }, '/new': { trusted: false }, '/other': { trusted: true } } }));
    check();
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({ projects: { '/w': { trusted: false }, '/mine': { trusted: true }, '/new': { trusted: false }, '/other': { trusted: false } } });
    expect(log.said).toEqual([expect.stringMatching(/^projects\.\/w\.trusted, projects\.\/other\.trusted in .* changed while Agent/)]);
  });

  it('puts back whole a keyed file the turn left unreadable (not JSON, too big, not a file), and moves what it left aside', () => {
    const state = tempDir('buckley-guarded');
    const files = ['broken.json', 'fifo.json', 'gone.json'].map((name) => join(state, name));
    for (const file of files) writeFileSync(file, '{"mcp": {"mine": {}}, "starts": 1}');
    const log = logger();
    const { check } = watchGuarded([], files.map((file) => ({ file, keys: ['mcp'] })), () => 'Agent', log);
    writeFileSync(files[0]!, '{"mcp": {"evil": {"command": ["sh"]}}, "starts": 2');
    rmSync(files[1]!);
    execFileSync('mkfifo', [files[1]!]);
    rmSync(files[2]!);
    check();
    for (const file of files.slice(0, 2)) expect(readFileSync(file, 'utf8')).toBe('{"mcp": {"mine": {}}, "starts": 1}');
    expect(readdirSync(state).filter((name) => name.includes('.buckley-moved-')).sort()).toEqual([expect.stringMatching(/^broken\.json\.buckley-moved-/), expect.stringMatching(/^fifo\.json\.buckley-moved-/)]);
    expect(log.said.join('\n')).toContain(`${files[0]} changed while Agent worked in its sandbox into what buckley-lsp cannot read to check what in it would run outside any sandbox when you next start Agent: put back as it was; what the turn left is at ${files[0]}.buckley-moved-`);
    // Removed: nothing in it runs, nothing to put back.
    expect(existsSync(files[2]!)).toBe(false);
    expect(log.said).toHaveLength(2);
  });

  it('puts back a guarded link the turn replaced or removed (a bind keeps its target, not the link) — not a file the user replaced — and moves aside a link it made in a guarded folder or the target of a link to nothing', () => {
    const [state, dotfiles] = [tempDir('buckley-guarded'), tempDir('buckley-dotfiles')];
    writeFileSync(join(dotfiles, 'settings.json'), '{}');
    symlinkSync(join(dotfiles, 'settings.json'), join(state, 'settings.json'));
    symlinkSync(join(dotfiles, 'keybindings.json'), join(state, 'keybindings.json'));
    symlinkSync(join(dotfiles, 'hooks'), join(state, 'hooks'));
    writeFileSync(join(dotfiles, 'hooks'), '# mine');
    mkdirSync(join(state, 'extensions'));
    const log = logger();
    writeFileSync(join(state, 'policies.json'), '{}');
    const places = ['settings.json', 'keybindings.json', 'hooks', 'extensions/*', 'policies.json'].map((place) => join(state, place));
    const { check } = watchGuarded(places, [], () => 'Agent', log);
    // As an atomic write does: a file renamed over the link.
    writeFileSync(join(state, 'new.json'), '{"hooks": "a command the user runs later"}');
    renameSync(join(state, 'new.json'), join(state, 'settings.json'));
    rmSync(join(state, 'hooks'));
    writeFileSync(join(dotfiles, 'keybindings.json'), '{"run": "a command"}');
    symlinkSync(join(state, 'elsewhere'), join(state, 'extensions', 'linked'));
    // A file itself is bound read-only: replaced, it was the user's doing on the host, and stays.
    writeFileSync(join(state, 'new-policies.json'), '{"mine": true}');
    renameSync(join(state, 'new-policies.json'), join(state, 'policies.json'));
    check();
    expect(readFileSync(join(state, 'policies.json'), 'utf8')).toBe('{"mine": true}');
    expect(readlinkSync(join(state, 'settings.json'))).toBe(join(dotfiles, 'settings.json'));
    expect(readFileSync(join(state, 'settings.json'), 'utf8')).toBe('{}');
    expect(readlinkSync(join(state, 'hooks'))).toBe(join(dotfiles, 'hooks'));
    expect(existsSync(join(dotfiles, 'keybindings.json'))).toBe(false);
    expect(readdirSync(join(state, 'extensions'))).toEqual([expect.stringMatching(/^linked\.buckley-moved-/)]);
    const said = log.said.join('\n');
    expect(said).toContain(`${join(state, 'settings.json')} was replaced while Agent worked in its sandbox (it was a link to ${join(dotfiles, 'settings.json')}); what it names would run outside any sandbox when you next start Agent: what the turn left is at ${join(state, 'settings.json.buckley-moved-')}`);
    expect(said).toContain(`${join(state, 'hooks')} was removed while Agent worked in its sandbox (it was a link to ${join(dotfiles, 'hooks')}); what it names would run outside any sandbox when you next start Agent: the link is put back`);
    expect(said).toContain(`${join(dotfiles, 'keybindings.json')} was made while Agent worked in its sandbox`);
  });
});
