/**
 * The ACP Registry's entry (registry/buckley-lsp/agent.json): what the registry checks — its
 * fields, an id that names its folder, a 16×16 icon in currentColor — and that it runs this
 * package, at this version, as its ACP agent (`buckley-lsp acp`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';

const folder = join(REPO, 'registry', 'buckley-lsp');
const manifest = JSON.parse(readFileSync(join(folder, 'agent.json'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));

describe('the ACP Registry entry', () => {
  it('has what the registry asks for, its id its folder', () => {
    expect(manifest).toMatchObject({ id: 'buckley-lsp', name: expect.any(String), description: expect.any(String), license: pkg.license });
    expect(manifest.id).toMatch(/^[a-z0-9-]+$/);
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('runs this package at this version with `acp`', () => {
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.distribution).toEqual({ npx: { package: `${pkg.name}@${pkg.version}`, args: ['acp'] } });
    expect(Object.keys(pkg.bin)).toContain(pkg.name);
  });

  it('has a 16×16 icon drawn in currentColor (themes recolour it)', () => {
    const icon = readFileSync(join(folder, 'icon.svg'), 'utf8');
    expect(icon).toMatch(/width="16" height="16"/);
    const fills = [...icon.matchAll(/(?:fill|stroke)="([^"]*)"/g)].map((match) => match[1]);
    expect(fills.length).toBeGreaterThan(0);
    for (const fill of fills) expect(['currentColor', 'none']).toContain(fill);
  });
});
