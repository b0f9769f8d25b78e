/**
 * The layout's rule (README, Development): each role imports only from the layers below it.
 * Shared modules (src/*.ts, src/risk/) know none of the roles; the wire knows neither side; our
 * coordinator does not know the bridge; nothing but the CLI knows the commands.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The role a source file belongs to, by its folder. */
function roleOf(file: string): string {
  const [first, second] = relative(SRC, file).split('/');
  if (second === undefined) return first === 'cli.ts' ? 'cli' : 'shared';
  return first === 'risk' ? 'shared' : first!;
}

/** What each role may import from, besides itself. */
const ALLOWED: Record<string, string[]> = {
  shared: [],
  wire: ['shared'],
  coordinator: ['shared', 'wire'],
  bridge: ['shared', 'wire', 'coordinator'],
  commands: ['shared', 'wire', 'coordinator', 'bridge'],
  cli: ['shared', 'commands'],
};

/** Relative imports of a file (static, dynamic and type-only), resolved to source paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, '.ts'));
}

describe('the layout', () => {
  const files = sourceFiles(SRC);

  it('knows the role of every source file', () => {
    for (const file of files) expect(Object.keys(ALLOWED), relative(SRC, file)).toContain(roleOf(file));
  });

  it('has each role import only from the layers below it', () => {
    const crossings = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => roleOf(target) !== roleOf(file) && !ALLOWED[roleOf(file)]!.includes(roleOf(target)))
        .map((target) => `${relative(SRC, file)} → ${relative(SRC, target)}`),
    );
    expect(crossings).toEqual([]);
  });

  it("has the features reach the editor only through the EditorClient, never the LSP connection", () => {
    const features = files.filter((file) => /^bridge\/(flows|editor|stores)\//.test(relative(SRC, file)) && !file.endsWith('editor/client.ts'));
    expect(features.length).toBeGreaterThan(20);
    const reaching = features.filter((file) => /\bConnection\b[^'"]*\}\s*from\s*'vscode-languageserver'/.test(readFileSync(file, 'utf8').replace(/\s+/g, ' ')));
    expect(reaching.map((file) => relative(SRC, file))).toEqual([]);
  });
});
