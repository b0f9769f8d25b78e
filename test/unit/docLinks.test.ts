/**
 * The documents hold together: every relative link of the READMEs and docs/ names a file that is
 * there and, with an anchor, a heading it has (as GitHub makes anchors); every document of docs/
 * is reachable from the README; the README stays a read of a few minutes; and the pictures are
 * the editor tests' own screens.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { READMES } from '../helpers/readme.js';

/** The text outside code blocks and inline code: links in code are not links. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const headings = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```$/gm, '').match(/^#{1,6} .*$/gm) ?? [];
  return new Set(headings.map((heading) => anchorOf(heading.replace(/^#+ /, ''))));
}

const links = READMES.flatMap((document) =>
  [...prose(readFileSync(join(REPO, document), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => ({ document, target: match[1]! })),
);
const local = links.filter(({ target }) => !/^[a-z]+:/.test(target));

describe('the documents', () => {
  it('link only to files that are there, and to headings they have', () => {
    const dead = local.flatMap(({ document, target }) => {
      const [path, anchor] = target.split('#');
      const file = path ? normalize(join(REPO, dirname(document), path)) : join(REPO, document);
      if (!existsSync(file)) return [`${document}: ${target} (no such file)`];
      if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) return [`${document}: ${target} (no such heading)`];
      return [];
    });
    expect(dead).toEqual([]);
    expect(local.length).toBeGreaterThan(10);
  });

  it('are each reachable from the README', () => {
    const linked = new Set(local.filter(({ document }) => document === 'README.md').map(({ target }) => target.split('#')[0]));
    for (const document of READMES.filter((name) => name.startsWith('docs/'))) expect(linked, document).toContain(document);
  });

  it('keep the README short: what it is, the quick start, the editors, where to read on', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(120);
    expect(readme.match(/^## .*$/gm)).toEqual(['## Quick start', '## What it does', '## Your editor', '## Read on']);
  });

  it("show pictures only of what an editor test captured (npm run pictures), none drawn by hand", () => {
    const tests = ['test/helix/helix.test.ts', 'test/nvim/neovimScreen.test.ts', 'test/emacs/emacsScreen.test.ts'].map((file) => readFileSync(join(REPO, file), 'utf8')).join('\n');
    const pictures = readdirSync(join(REPO, 'docs', 'pictures')).filter((name) => name.endsWith('.svg'));
    expect(pictures.length).toBeGreaterThan(0);
    for (const name of pictures) expect(tests, name).toContain(`picture(session, '${name.slice(0, -'.svg'.length)}'`);
  });
});
