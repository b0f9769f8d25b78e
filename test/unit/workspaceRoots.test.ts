/**
 * The editor's workspace (src/bridge/workspace.ts): the folders it names; else the folder it
 * started in (Helix without a root marker names none), but never / or the user's home.
 */
import { describe, expect, it } from 'vitest';
import { workspaceRootsOf } from '../../src/bridge/workspace.js';

const where = { cwd: '/home/ada/src/shop', home: '/home/ada' };

describe('the workspace of an editor', () => {
  it('is the folders the editor names, else its rootUri', () => {
    expect(workspaceRootsOf({ workspaceFolders: [{ name: 'a', uri: 'file:///srv/a' }, { name: 'b', uri: 'file:///srv/b' }], rootUri: 'file:///srv' }, where)).toEqual(['file:///srv/a', 'file:///srv/b']);
    expect(workspaceRootsOf({ workspaceFolders: [], rootUri: 'file:///srv/a' }, where)).toEqual(['file:///srv/a']);
  });

  it('is the folder it started in when it names none (Helix sends workspaceFolders: [])', () => {
    expect(workspaceRootsOf({ workspaceFolders: [], rootUri: null }, where)).toEqual(['file:///home/ada/src/shop']);
    expect(workspaceRootsOf({ rootUri: null }, { cwd: '/tmp/a b', home: undefined })).toEqual(['file:///tmp/a%20b']);
  });

  it('is none when it started in / or the home folder: everything would be open to the agent', () => {
    expect(workspaceRootsOf({ rootUri: null }, { cwd: '/', home: '/home/ada' })).toEqual([]);
    expect(workspaceRootsOf({ rootUri: null }, { cwd: '/home/ada/', home: '/home/ada' })).toEqual([]);
  });
});
