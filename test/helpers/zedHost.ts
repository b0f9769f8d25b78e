/**
 * A Zed host for the extension's real wasm: the core module Zed loads (taken out of the built
 * component), instantiated with Node's WebAssembly and the host functions the extension imports
 * (the `zed:extension` settings, worktree, npm and status functions and the five WASI preview1
 * calls its std uses), lowered by hand with the component model's canonical ABI for exactly
 * these signatures (see `wasm-tools component wit` of the component). Zed cannot run here; what
 * it answers is what a test says it answers.
 */
import { randomFillSync } from 'node:crypto';

export type Status = 'none' | 'downloading' | 'checking-for-update' | `failed: ${string}`;

export interface ZedWorld {
  /** The `lsp.buckley-lsp` settings as Zed serializes them (LspSettings JSON). */
  lspSettings?: Record<string, unknown>;
  /** What `worktree.which(name)` finds. */
  onPath?: Record<string, string>;
  shellEnv?: [string, string][];
  nodePath?: string;
  npm?: { installed?: string; latest?: string | Error; installFails?: string };
  /** The extension's work directory: Zed gives it as PWD, which init-extension makes the cwd. */
  workDir?: string;
}

export interface Command {
  command: string;
  args: string[];
  env: [string, string][];
}

export interface ZedHost {
  languageServerCommand(id: string): { ok: Command } | { err: string };
  initializationOptions(id: string): { ok: string | null } | { err: string };
  workspaceConfiguration(id: string): { ok: string | null } | { err: string };
  statuses: Status[];
  settingsAsked: { category: string; key: string | null; worktree: bigint | null }[];
  npmInstalls: [string, string][];
}

// Node has WebAssembly; the project's TypeScript lib (no DOM) does not declare it.
interface Memory {
  buffer: ArrayBuffer;
}
const { WebAssembly: wasm } = globalThis as unknown as {
  WebAssembly: { instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }> };
};

const WORKTREE = 1;
const WORKTREE_ID = 7n;

/** Finds the core module that carries Zed's `zed:api-version` section among a component's. */
export function extensionModule(component: Uint8Array): { module: Uint8Array; apiVersion: string } {
  const bytes = Buffer.from(component);
  if (bytes.readUInt32LE(0) !== 0x6d736100 || bytes.readUInt32LE(4) !== 0x0001000d) throw new Error('not a WebAssembly component (layer 1)');
  const found: { module: Uint8Array; apiVersion: string }[] = [];
  for (const section of sections(bytes, 8)) {
    if (section.id !== 1) continue; // a core module
    const module = bytes.subarray(section.start, section.end);
    for (const inner of sections(module, 8)) {
      if (inner.id !== 0) continue;
      const { text: name, next } = readName(module, inner.start);
      if (name === 'zed:api-version') {
        const data = module.subarray(next, inner.end);
        found.push({ module, apiVersion: [0, 2, 4].map((at) => data.readUInt16BE(at)).join('.') });
      }
    }
  }
  if (found.length !== 1) throw new Error(`expected one core module with a zed:api-version section, found ${found.length}`);
  return found[0]!;
}

function* sections(bytes: Buffer, from: number): Generator<{ id: number; start: number; end: number }> {
  let at = from;
  while (at < bytes.length) {
    const id = bytes[at]!;
    const { value: size, next } = leb(bytes, at + 1);
    yield { id, start: next, end: next + size };
    at = next + size;
  }
}

function leb(bytes: Buffer, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (!(byte & 0x80)) return { value, next: at };
    shift += 7;
  }
}

function readName(bytes: Buffer, at: number): { text: string; next: number } {
  const { value: length, next } = leb(bytes, at);
  return { text: bytes.subarray(next, next + length).toString('utf8'), next: next + length };
}

export async function instantiateExtension(module: Uint8Array, world: ZedWorld): Promise<ZedHost> {
  const statuses: Status[] = [];
  const settingsAsked: ZedHost['settingsAsked'] = [];
  const npmInstalls: [string, string][] = [];
  let exports: Record<string, any> = {};
  const view = () => new DataView((exports.memory as Memory).buffer);
  const bytesAt = (ptr: number, len: number) => new Uint8Array((exports.memory as Memory).buffer, ptr, len);
  const readString = (ptr: number, len: number) => Buffer.from(bytesAt(ptr, len)).toString('utf8');
  /** A string in the guest's memory, allocated with its cabi_realloc: [ptr, len]. */
  const writeString = (text: string): [number, number] => {
    const data = Buffer.from(text, 'utf8');
    const ptr = exports.cabi_realloc(0, 0, 1, Math.max(1, data.length)) as number;
    bytesAt(ptr, data.length).set(data);
    return [ptr, data.length];
  };
  const putString = (at: number, text: string) => {
    const [ptr, len] = writeString(text);
    view().setUint32(at, ptr, true);
    view().setUint32(at + 4, len, true);
  };
  const putResultString = (ret: number, result: { ok: string } | { err: string }) => {
    view().setUint8(ret, 'ok' in result ? 0 : 1);
    putString(ret + 4, 'ok' in result ? result.ok : result.err);
  };
  const checkWorktree = (handle: number) => {
    if (handle !== WORKTREE) throw new Error(`the extension used worktree handle ${handle}`);
  };
  const STATUSES: Status[] = ['none', 'downloading', 'checking-for-update'];
  const environ = Buffer.from(`PWD=${world.workDir ?? '/zed/extensions/work/buckley-lsp'}\0`, 'utf8');

  const imports = {
    $root: {
      '[resource-drop]key-value-store': () => {},
      '[resource-drop]worktree': () => {},
      '[resource-drop]project': () => {},
      '[method]worktree.id': (handle: number) => (checkWorktree(handle), WORKTREE_ID),
      '[method]worktree.which': (handle: number, ptr: number, len: number, ret: number) => {
        checkWorktree(handle);
        const found = world.onPath?.[readString(ptr, len)];
        view().setUint8(ret, found === undefined ? 0 : 1);
        if (found !== undefined) putString(ret + 4, found);
      },
      '[method]worktree.shell-env': (handle: number, ret: number) => {
        checkWorktree(handle);
        const env = world.shellEnv ?? [];
        const list = exports.cabi_realloc(0, 0, 4, Math.max(1, env.length * 16)) as number;
        env.forEach(([name, value], i) => (putString(list + i * 16, name), putString(list + i * 16 + 8, value)));
        view().setUint32(ret, list, true);
        view().setUint32(ret + 4, env.length, true);
      },
      'get-settings': (hasLocation: number, worktreeId: bigint, _pathPtr: number, _pathLen: number, categoryPtr: number, categoryLen: number, hasKey: number, keyPtr: number, keyLen: number, ret: number) => {
        const category = readString(categoryPtr, categoryLen);
        const key = hasKey ? readString(keyPtr, keyLen) : null;
        settingsAsked.push({ category, key, worktree: hasLocation ? worktreeId : null });
        if (category !== 'lsp') return putResultString(ret, { err: `unknown settings category ${category}` });
        putResultString(ret, { ok: JSON.stringify(key === 'buckley-lsp' ? (world.lspSettings ?? {}) : {}) });
      },
      'set-language-server-installation-status': (namePtr: number, nameLen: number, kind: number, messagePtr: number, messageLen: number) => {
        if (readString(namePtr, nameLen) !== 'buckley-lsp') throw new Error('status for another server');
        statuses.push(kind === 3 ? `failed: ${readString(messagePtr, messageLen)}` : STATUSES[kind]!);
      },
    },
    'zed:extension/nodejs': {
      'node-binary-path': (ret: number) => putResultString(ret, { ok: world.nodePath ?? '/zed/node/bin/node' }),
      'npm-package-latest-version': (ptr: number, len: number, ret: number) => {
        const latest = world.npm?.latest;
        if (readString(ptr, len) !== 'buckley-lsp') throw new Error('asked about another package');
        putResultString(ret, latest === undefined || latest instanceof Error ? { err: latest?.message ?? 'no latest version' } : { ok: latest });
      },
      'npm-package-installed-version': (ptr: number, len: number, ret: number) => {
        if (readString(ptr, len) !== 'buckley-lsp') throw new Error('asked about another package');
        view().setUint8(ret, 0);
        const installed = world.npm?.installed;
        view().setUint8(ret + 4, installed === undefined ? 0 : 1);
        if (installed !== undefined) putString(ret + 8, installed);
      },
      'npm-install-package': (namePtr: number, nameLen: number, versionPtr: number, versionLen: number, ret: number) => {
        npmInstalls.push([readString(namePtr, nameLen), readString(versionPtr, versionLen)]);
        const failure = world.npm?.installFails;
        view().setUint8(ret, failure === undefined ? 0 : 1);
        if (failure !== undefined) putString(ret + 4, failure);
      },
    },
    wasi_snapshot_preview1: {
      random_get: (ptr: number, len: number) => (randomFillSync(bytesAt(ptr, len)), 0),
      environ_sizes_get: (countPtr: number, sizePtr: number) => (view().setUint32(countPtr, 1, true), view().setUint32(sizePtr, environ.length, true), 0),
      environ_get: (pointers: number, buffer: number) => (view().setUint32(pointers, buffer, true), bytesAt(buffer, environ.length).set(environ), 0),
      fd_write: (fd: number, iovs: number, count: number, writtenPtr: number) => {
        let written = 0;
        for (let i = 0; i < count; i++) {
          const ptr = view().getUint32(iovs + i * 8, true);
          const len = view().getUint32(iovs + i * 8 + 4, true);
          process.stderr.write(`[zed extension fd ${fd}] ${readString(ptr, len)}`);
          written += len;
        }
        view().setUint32(writtenPtr, written, true);
        return 0;
      },
      proc_exit: (code: number) => {
        throw new Error(`the extension exited with code ${code}`);
      },
    },
  };
  const { instance } = await wasm.instantiate(module, imports);
  exports = instance.exports as Record<string, any>;
  exports['init-extension']();

  const call = (name: string, id: string): number => {
    const [ptr, len] = writeString(id);
    return exports[name](ptr, len, WORKTREE) as number;
  };
  const stringList = (ptr: number, count: number, width: number): string[][] =>
    Array.from({ length: count }, (_, i) => Array.from({ length: width }, (_, j) => readString(view().getUint32(ptr + i * width * 8 + j * 8, true), view().getUint32(ptr + i * width * 8 + j * 8 + 4, true))));
  const optionResult = (name: string, id: string): { ok: string | null } | { err: string } => {
    const ret = call(name, id);
    const v = view();
    const result =
      v.getUint8(ret) === 0
        ? { ok: v.getUint8(ret + 4) ? readString(v.getUint32(ret + 8, true), v.getUint32(ret + 12, true)) : null }
        : { err: readString(v.getUint32(ret + 4, true), v.getUint32(ret + 8, true)) };
    exports[`cabi_post_${name}`](ret);
    return result;
  };

  return {
    statuses,
    settingsAsked,
    npmInstalls,
    languageServerCommand(id) {
      const ret = call('language-server-command', id);
      const v = view();
      const word = (offset: number) => v.getUint32(ret + offset, true);
      const result =
        v.getUint8(ret) === 0
          ? {
              ok: {
                command: readString(word(4), word(8)),
                args: stringList(word(12), word(16), 1).map(([arg]) => arg!),
                env: stringList(word(20), word(24), 2) as [string, string][],
              },
            }
          : { err: readString(word(4), word(8)) };
      exports['cabi_post_language-server-command'](ret);
      return result;
    },
    initializationOptions: (id) => optionResult('language-server-initialization-options', id),
    workspaceConfiguration: (id) => optionResult('language-server-workspace-configuration', id),
  };
}
