/**
 * The README's code blocks, as the tests run them. Each block with a language is tagged with
 * `<!-- snippet: NAME -->` on the line above it; a test takes it with `readmeSnippet(NAME)` and
 * runs it as a user would (test/unit/readme.test.ts checks that every block is taken by a test).
 * Users copy them with `buckley-lsp` on their PATH and their agent (`gemini` in the snippets):
 * `userPath()` gives the tests the same.
 */
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, REPO, SCRIPTED_AGENT } from './paths.js';
import { tempDir } from './temp.js';

export interface Snippet {
  /** From the `<!-- snippet: NAME -->` line above the block; undefined when it has none. */
  name: string | undefined;
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

/** The documents whose code blocks are run: the READMEs (the project's, the Zed extension's) and docs/. */
export const READMES = ['README.md', 'zed-extension/README.md', ...readdirSync(join(REPO, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];

export function readmeSnippets(readme = 'README.md'): Snippet[] {
  const path = join(REPO, readme);
  const lines = readFileSync(path, 'utf8').split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`README line ${i + 1}: a code block that does not end`);
    const tag = /^<!-- snippet: (\S+) -->$/.exec(lines[i - 1] ?? '');
    snippets.push({ name: tag?.[1], lang: open[1]!, code: `${lines.slice(i + 1, end).join('\n')}\n`, line: i + 1 });
    i = end;
  }
  return snippets;
}

/** The code of the block tagged `name` in one of the READMEs. */
export function readmeSnippet(name: string): string {
  const snippet = READMES.flatMap((readme) => readmeSnippets(readme)).find((candidate) => candidate.name === name);
  if (!snippet) throw new Error(`no README has a block tagged <!-- snippet: ${name} -->`);
  return snippet.code;
}

/**
 * A PATH on which `buckley-lsp` is the built server and `gemini` the scripted ACP agent (it
 * ignores `--acp`), ahead of the test's own PATH.
 */
export function userPath(agentFlags: readonly string[] = []): string {
  const dir = tempDir('buckley-user-bin');
  const script = (name: string, target: string, flags: readonly string[] = []) => {
    writeFileSync(join(dir, name), `#!/bin/sh\nexec "${process.execPath}" "${target}" ${flags.map((flag) => `"${flag}" `).join('')}"$@"\n`);
    chmodSync(join(dir, name), 0o755);
  };
  script('buckley-lsp', BIN);
  script('gemini', SCRIPTED_AGENT, agentFlags);
  return `${dir}:${process.env.PATH}`;
}
