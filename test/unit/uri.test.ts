/** One way from a URI to a path, for every place that needs one (the coordinator, the bridge, the answers). */
import { describe, expect, it } from 'vitest';
import { pathOfUri, shownName, uriToPath } from '../../src/uri.js';

describe('uriToPath and pathOfUri', () => {
  it('a local file URI: its path, escapes decoded', () => {
    expect(pathOfUri('file:///home/me/my%20project/a%3Ab.ts')).toBe('/home/me/my project/a:b.ts');
    expect(uriToPath('file:///home/me/x.ts')).toBe('/home/me/x.ts');
  });

  it('another scheme, or a file URI that names no local file: no path; shown as it is', () => {
    expect(pathOfUri('untitled:Untitled-1')).toBeUndefined();
    expect(uriToPath('untitled:Untitled-1')).toBe('untitled:Untitled-1');
    // An encoded slash, and another host: fileURLToPath refuses them; nothing throws.
    expect(pathOfUri('file:///a%2Fb')).toBeUndefined();
    expect(pathOfUri('file://server/share/x')).toBeUndefined();
    expect(pathOfUri(undefined)).toBeUndefined();
  });
});

describe('shownName: one way a file is named to people', () => {
  it('relative to the workspace folder it is in, whether file and folder are paths or URIs', () => {
    expect(shownName('/work/project/src/a.ts', ['/work/project'])).toBe('src/a.ts');
    expect(shownName('file:///work/project/src/my%20file.ts', ['file:///work/project'])).toBe('src/my file.ts');
    expect(shownName('file:///work/project/src/a.ts', ['/work/project/'])).toBe('src/a.ts');
  });

  it('the nearest folder where folders nest', () => {
    expect(shownName('/work/project/pkg/x/a.ts', ['/work/project', '/work/project/pkg/x'])).toBe('a.ts');
  });

  it('absolute outside every folder (a sibling that shares the prefix included), and as it is for another scheme', () => {
    expect(shownName('/work/project-old/a.ts', ['/work/project'])).toBe('/work/project-old/a.ts');
    expect(shownName('/etc/passwd', ['/work/project', undefined])).toBe('/etc/passwd');
    expect(shownName('/work/project', ['/work/project'])).toBe('/work/project');
    expect(shownName('untitled:Untitled-1', ['/work/project'])).toBe('untitled:Untitled-1');
  });
});
