/**
 * The layout's rule (README, Development): each role imports only from the layers below it.
 * Shared modules (src/*.ts, src/risk/) know none of the roles; the wire knows neither side; our
 * coordinator does not know the bridge; the ACP face reaches the coordinator through the bridge's
 * link; nothing but the CLI knows the commands.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
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
  // The ACP face is a client of the coordinator, as the language server is: through its link.
  acp: ['shared', 'wire', 'bridge'],
  commands: ['shared', 'wire', 'coordinator', 'bridge', 'acp'],
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

  it('takes zod only through schema.ts (zod/mini): classic zod, with every locale, would ride into the startup chunks', () => {
    const classic = files.filter((file) => !file.endsWith('/schema.ts') && /from\s+['"]zod(\/v4)?['"]/.test(readFileSync(file, 'utf8')));
    expect(classic.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('names no gRPC method by a string at a call site: calls go through the typed map (wire/methods.ts)', () => {
    const named = files
      .filter((file) => !file.endsWith('wire/client.ts'))
      .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/\.(unary|stream)(<[^>]*>)?\(\s*['"`]\w+/g)].map((match) => `${relative(SRC, file)}: ${match[0]}`));
    expect(named).toEqual([]);
  });
});

/** Functions that fit on a screen, files a person can hold (the README's Development section). */
describe('the sizes', () => {
  const MAX_FILE_LINES = 500;
  const MAX_FUNCTION_LINES = 80;
  const files = sourceFiles(SRC);

  it(`keeps every source file under ${MAX_FILE_LINES} lines`, () => {
    const long = files.map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length })).filter(({ lines }) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`keeps every function under ${MAX_FUNCTION_LINES} lines`, () => {
    const long: string[] = [];
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const start = source.getLineAndCharacterOfPosition(node.body.getStart()).line;
          const end = source.getLineAndCharacterOfPosition(node.body.getEnd()).line;
          if (end - start + 1 > MAX_FUNCTION_LINES) long.push(`${relative(SRC, file)}:${start + 1} (${end - start + 1} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(long).toEqual([]);
  });
});
