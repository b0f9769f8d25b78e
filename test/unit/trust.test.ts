import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TrustStore } from '../../src/features/trust.js';
import { RootLogger } from '../../src/logger.js';

const logger = new RootLogger('error', () => {});
const fresh = () => join(mkdtempSync(join(tmpdir(), 'buckley-trust-')), 'state', 'trust.json');

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
    expect(store.problem).toContain('is corrupt, so nothing is trusted; fix or delete it');
    expect(store.isTrusted('agent', 'seed')).toBe(false);
    await expect(store.trust('agent', 'Edit')).rejects.toThrow('is corrupt');
    expect(readFileSync(path, 'utf8')).toBe(content);
  });
});
