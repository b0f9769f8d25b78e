import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TrustStore } from '../../src/bridge/stores/trust.js';
import { RootLogger } from '../../src/logger.js';
import { tempDir } from '../helpers/temp.js';

const logger = new RootLogger('error', () => {});
const fresh = () => join(tempDir('buckley-trust'), 'state', 'trust.json');

describe('TrustStore', () => {
  it('remembers agent + tool pairs across instances, in a user-only file', async () => {
    const path = fresh();
    const store = new TrustStore(path, logger);
    await store.load();
    expect(store.isTrusted('agent-a', 'Edit config.json')).toBe(false);
    await store.trust('agent-a', 'Edit config.json');
    const again = new TrustStore(path, logger);
    await again.load();
    expect(again.isTrusted('agent-a', 'Edit config.json')).toBe(true);
    expect(again.isTrusted('agent-b', 'Edit config.json')).toBe(false);
    expect(again.isTrusted('agent-a', 'Run tests')).toBe(false);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('loses nothing when many writers trust at the same time', async () => {
    const path = fresh();
    const stores = Array.from({ length: 12 }, () => new TrustStore(path, logger));
    await Promise.all(stores.map((store) => store.load()));
    await Promise.all(stores.map((store, i) => store.trust('agent', `tool ${i}`)));
    const file = JSON.parse(readFileSync(path, 'utf8'));
    expect(file.trusted.map((entry: { tool: string }) => entry.tool).sort()).toEqual(stores.map((_, i) => `tool ${i}`).sort());
  });

  it.each([
    ['not JSON', '{"version": 1, "trusted": [ oops'],
    ['the wrong shape', '{"version": 1, "trusted": "everything"}'],
    ['an unknown version', '{"version": 9, "trusted": []}'],
  ])('reports a corrupt file (%s), trusts nothing, and leaves it alone', async (_name, content) => {
    const path = fresh();
    const store = new TrustStore(path, logger);
    await store.trust('agent', 'seed'); // creates the directory
    writeFileSync(path, content);
    await store.load();
    expect(store.problem).toContain('is not a trust list (version 1), so nothing is trusted; fix or delete it');
    expect(store.problemSummary).toBe('trust.json is not a trust list');
    expect(store.isTrusted('agent', 'seed')).toBe(false);
    await expect(store.trust('agent', 'Edit')).rejects.toThrow('is not a trust list');
    expect(readFileSync(path, 'utf8')).toBe(content);
  });

  const mkfifo = (path: string) => execFileSync('mkfifo', [path]);
  const places: [string, (path: string) => void, string][] = [
    ['a named pipe', mkfifo, 'is a named pipe (FIFO), not a file; remove it'],
    ['a directory', (path) => mkdirSync(path), 'is a directory, not a file; remove it'],
  ];

  it.each(places)('says so when the trust file is %s, without waiting on it, and trusts nothing', async (_name, make, problem) => {
    const path = fresh();
    mkdirSync(dirname(path), { recursive: true });
    make(path);
    const store = new TrustStore(path, logger);
    await store.load();
    expect(store.problem).toContain(`${path} ${problem}`);
    expect(store.problemSummary).toMatch(/^trust\.json is a (named pipe|directory)$/);
    await expect(store.trust('agent', 'Edit')).rejects.toThrow(problem);
  });

  it.each(places)('says so when the lock file is %s', async (_name, make) => {
    const path = fresh();
    mkdirSync(dirname(path), { recursive: true });
    make(`${path}.lock`);
    const store = new TrustStore(path, logger);
    await expect(store.trust('agent', 'Edit')).rejects.toThrow(`the lock file ${path}.lock is a`);
  });

  it.skipIf(process.getuid?.() === 0)('says so when the trust file cannot be read (not as root, who reads anything)', async () => {
    const path = fresh();
    const store = new TrustStore(path, logger);
    await store.trust('agent', 'seed');
    chmodSync(path, 0o000);
    await store.load();
    expect(store.problem).toContain(`cannot read ${path}: permission denied; make it yours and readable (chmod u+rw ${path}) or remove it`);
    expect(store.problemSummary).toBe('trust.json is not readable');
  });
});
