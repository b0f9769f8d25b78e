/** One way from a URI to a path, for every place that needs one (the coordinator, the bridge, the answers). */
import { describe, expect, it } from 'vitest';
import { pathOfUri, uriToPath } from '../../src/uri.js';

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
