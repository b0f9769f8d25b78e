/**
 * The Zed extension as Zed gets it: the component built for wasm32-wasip1 and wrapped with the
 * WASI reactor adapter (CI builds it, see .ci/run; BUCKLEY_ZED_WASM_DIR names the directory with
 * `buckley.component.wasm` and its `world.wit`). Checked: the component's world and Zed API
 * version, then the real wasm run with a Zed host (test/helpers/zedHost.ts): where it finds the
 * server (setting → PATH → npm) and what it passes through.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { extensionModule, instantiateExtension, type ZedWorld } from '../helpers/zedHost.js';

const dir = process.env.BUCKLEY_ZED_WASM_DIR;
const component = dir && join(dir, 'buckley.component.wasm');
const built = component !== undefined && existsSync(component);
if (dir && !built) throw new Error(`BUCKLEY_ZED_WASM_DIR=${dir} has no buckley.component.wasm: the wasm build failed?`);
if (!built) it.skip('the Zed extension wasm is not built here (CI builds it: .ci/run, then BUCKLEY_ZED_WASM_DIR=DIR/out)', () => {});

const lockedApi = /name = "zed_extension_api"\nversion = "([^"]+)"/.exec(readFileSync(`${REPO}zed-extension/Cargo.lock`, 'utf8'))?.[1];

if (built) describe('the Zed extension component (real wasm)', () => {
  let module: Uint8Array;
  beforeAll(() => {
    const found = extensionModule(readFileSync(component));
    module = found.module;
    expect(found.apiVersion).toBe(lockedApi);
  });
  const start = (world: ZedWorld) => instantiateExtension(module, world);

  it("exports Zed's extension world: init-extension and language-server-command with the API's types", () => {
    const wit = readFileSync(join(dir!, 'world.wit'), 'utf8');
    expect(wit).toContain('export init-extension: func();');
    expect(wit).toContain('export language-server-command: func(language-server-id: string, worktree: borrow<worktree>) -> result<command, string>;');
    expect(wit).toContain('import get-settings: func(path: option<settings-location>, category: string, key: option<string>) -> result<string, string>;');
    expect(wit).toMatch(/import zed:extension\/nodejs;/);
  });

  it("runs the user's binary setting first, with its arguments and env", async () => {
    const zed = await start({
      lspSettings: { binary: { path: '/opt/buckley/bin/buckley-lsp', arguments: ['--stdio', '--log-level', 'debug'], env: { BUCKLEY_AGENT: 'gemini --acp' } } },
      onPath: { 'buckley-lsp': '/usr/local/bin/buckley-lsp' },
    });
    expect(zed.languageServerCommand('buckley-lsp')).toEqual({
      ok: { command: '/opt/buckley/bin/buckley-lsp', args: ['--stdio', '--log-level', 'debug'], env: [['BUCKLEY_AGENT', 'gemini --acp']] },
    });
    expect(zed.settingsAsked).toContainEqual({ category: 'lsp', key: 'buckley-lsp', worktree: 7n });
    expect(zed.statuses).toEqual([]);
  });

  it('then buckley-lsp on the worktree\'s PATH, with --stdio and the shell environment', async () => {
    const zed = await start({ onPath: { 'buckley-lsp': '/usr/local/bin/buckley-lsp' }, shellEnv: [['PATH', '/usr/local/bin:/usr/bin'], ['HOME', '/home/ada']] });
    expect(zed.languageServerCommand('buckley-lsp')).toEqual({
      ok: { command: '/usr/local/bin/buckley-lsp', args: ['--stdio'], env: [['PATH', '/usr/local/bin:/usr/bin'], ['HOME', '/home/ada']] },
    });
    expect(zed.npmInstalls).toEqual([]);
  });

  it("then the npm package, installed and run with Zed's Node from the extension's work directory", async () => {
    const zed = await start({ npm: { latest: '0.1.0' }, workDir: '/zed/extensions/work/buckley' });
    expect(zed.languageServerCommand('buckley-lsp')).toEqual({
      ok: { command: '/zed/node/bin/node', args: ['/zed/extensions/work/buckley/node_modules/buckley-lsp/dist/buckley-lsp.js', '--stdio'], env: [] },
    });
    expect(zed.npmInstalls).toEqual([['buckley-lsp', '0.1.0']]);
    expect(zed.statuses).toEqual(['checking-for-update', 'downloading', 'none']);
  });

  it('says how to give Zed the server when the package cannot be had (it is not published yet)', async () => {
    const zed = await start({ npm: { latest: new Error('404 Not Found - GET https://registry.npmjs.org/buckley-lsp') } });
    const result = zed.languageServerCommand('buckley-lsp');
    expect(result).toEqual({ err: expect.stringContaining('cannot look up buckley-lsp on npm: 404 Not Found') });
    const message = 'err' in result ? result.err : '';
    expect(message).toContain('so that `buckley-lsp` is on your PATH');
    expect(message).toContain('"lsp": { "buckley-lsp": { "binary": { "path": "/path/to/buckley-lsp" } } }');
    expect(zed.statuses).toEqual(['checking-for-update', `failed: ${message}`]);
  });

  it('passes initialization_options through, and settings as the "buckley" section', async () => {
    const zed = await start({ lspSettings: { initialization_options: { agent: { command: ['gemini', '--acp'] } }, settings: { approvals: { autoApprove: 'low' } } } });
    expect(zed.initializationOptions('buckley-lsp')).toEqual({ ok: JSON.stringify({ agent: { command: ['gemini', '--acp'] } }) });
    expect(zed.workspaceConfiguration('buckley-lsp')).toEqual({ ok: JSON.stringify({ buckley: { approvals: { autoApprove: 'low' } } }) });
    const bare = await start({});
    expect(bare.initializationOptions('buckley-lsp')).toEqual({ ok: null });
  });
});
