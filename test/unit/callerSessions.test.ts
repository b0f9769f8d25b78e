/**
 * The coordinator's sessions of its callers (src/coordinator/sessions.ts): each its caller's only,
 * and bounded — per caller and in all, the least recently used forgotten first, its agent sessions
 * ended — with metadata of a few names, not a store.
 */
import { describe, expect, it } from 'vitest';
import { CallerSessions, MAX_METADATA_BYTES, MAX_METADATA_ENTRIES, metadataProblem } from '../../src/coordinator/sessions.js';

describe("the callers' sessions", () => {
  it('are their caller\'s only: another identity naming one finds none', () => {
    const sessions = new CallerSessions(() => undefined);
    const id = sessions.create('alice', 'alice', { workspace_root: '/w' });
    expect(sessions.use(id, 'bob')).toBeUndefined();
    expect(sessions.use(id, 'alice')).toMatchObject({ owner: 'alice', metadata: { workspace_root: '/w' } });
  });

  it('keeps a caller its most recently used, forgetting the least recently used first and ending its agent sessions', () => {
    const ended: string[] = [];
    const sessions = new CallerSessions((id) => ended.push(id), { perCaller: 3, total: 100 });
    const [a, b, c] = [1, 2, 3].map(() => sessions.create('alice', 'alice', {}));
    const other = sessions.create('bob', 'bob', {});
    sessions.use(a!, 'alice');
    const d = sessions.create('alice', 'alice', {});
    expect(ended).toEqual([b]);
    for (const id of [a, c, d]) expect(sessions.use(id!, 'alice')).toBeDefined();
    expect(sessions.use(other, 'bob')).toBeDefined();
  });

  it('keeps so many in all, whoever made them', () => {
    const ended: string[] = [];
    const sessions = new CallerSessions((id) => ended.push(id), { perCaller: 10, total: 4 });
    const made = Array.from({ length: 6 }, (_, i) => sessions.create(`caller-${i}`, `caller-${i}`, {}));
    expect(ended).toEqual(made.slice(0, 2));
    sessions.endAll();
    expect(ended).toEqual([...made.slice(0, 2), ...made.slice(2)]);
    expect(sessions.use(made[5]!, 'caller-5')).toBeUndefined();
  });

  it('takes metadata of a few names, and says why it refuses more', () => {
    expect(metadataProblem({ client: 'Neovim', workspace_root: '/w' })).toBeUndefined();
    const many = Object.fromEntries(Array.from({ length: MAX_METADATA_ENTRIES + 1 }, (_, i) => [`k${i}`, 'v']));
    expect(metadataProblem(many)).toBe(`the session's metadata would hold ${MAX_METADATA_ENTRIES + 1} entries: at most ${MAX_METADATA_ENTRIES}`);
    expect(metadataProblem({ a: 'x'.repeat(MAX_METADATA_BYTES) })).toBe("the session's metadata would hold 65 KB: at most 64 KB");
    // A change that empties a value removes it.
    expect(metadataProblem(many, { k0: '' })).toBeUndefined();
  });
});
