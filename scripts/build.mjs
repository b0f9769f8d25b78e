// Bundles the CLI for speed, in three builds whose files sit side by side in dist/:
//
// * the bridge — dist/buckley-lsp.js, the `bin`: the language server, `doctor`, and the gRPC
//   client; what the server does not need to answer `initialize` (gRPC, protobuf, the
//   coordinator connection) is in chunk-* files loaded by dynamic import() on first use;
// * our coordinator — dist/buckley-lsp-embedded.js (the embedded coordinator's worker thread,
//   loaded by src/bridge/embedded.ts) and dist/buckley-lsp-coordinator.js (the
//   `coordinator` command), with their coordinator-* chunks;
// * the ACP SDK — dist/vendor-acp-sdk.js, loaded when the first agent starts;
// * the editor MCP server's stdio relay — dist/buckley-lsp-editor-mcp.js, which agents start.
//
// Built apart, they do not share chunks: the bridge's startup path then loads a few files with
// only what it runs (shared with our coordinator it was a dozen, and with the SDK it compiled
// all of zod before `initialize`). A thread or process runs code of one build only, so no module
// is loaded twice in one place. The .proto files stay in proto/ and are found from dist/.
import { build } from 'esbuild';
import { chmod, readdir, readFile, rm, writeFile } from 'node:fs/promises';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const outdir = new URL('../dist/', import.meta.url).pathname;
const entry = `${outdir}buckley-lsp.js`;
const source = (path) => new URL(`../src/${path}`, import.meta.url).pathname;

// Chunks of an earlier build have other names: remove them, not the bench bundles.
for (const name of await readdir(outdir).catch(() => [])) {
  if (/^(buckley-lsp|chunk-|coordinator-|vendor-)/.test(name)) await rm(`${outdir}${name}`);
}

/** Imports that another build serves: left as imports of its file, next to ours at run time. */
const servedApart = (files) => ({
  name: 'served-apart',
  setup(build) {
    for (const [specifier, file] of Object.entries(files)) {
      const filter = new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
      build.onResolve({ filter }, () => ({ path: `./${file}`, external: true }));
    }
  },
});

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  outdir,
  define: { __BUCKLEY_VERSION__: JSON.stringify(pkg.version) },
  // grpc-js and protobufjs are CommonJS and call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __buckleyCreateRequire } from 'node:module';\nconst require = __buckleyCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  // jsonc-parser's `main` is a UMD build that require()s its parts by computed names, which no
  // bundle can follow: its ES modules are bundled instead.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
};
const acpSdk = { '@agentclientprotocol/sdk': 'vendor-acp-sdk.js' };

await build({ ...common, entryPoints: { 'vendor-acp-sdk': '@agentclientprotocol/sdk' } });
await build({
  ...common,
  entryPoints: {
    'buckley-lsp-embedded': source('coordinator/embeddedWorker.ts'),
    'buckley-lsp-coordinator': source('commands/coordinator.ts'),
  },
  splitting: true,
  chunkNames: 'coordinator-[hash]',
  plugins: [servedApart(acpSdk)],
});
await build({
  ...common,
  entryPoints: { 'buckley-lsp': source('cli.ts') },
  splitting: true,
  chunkNames: 'chunk-[hash]',
  // cli.ts imports the `coordinator` command as ./commands/coordinator.js: the build above serves it.
  plugins: [servedApart({ ...acpSdk, './commands/coordinator.js': 'buckley-lsp-coordinator.js' })],
});
// The editor MCP server's stdio relay, which agents start (coordinator/agents/editorMcp.ts): alone, tiny.
await build({ ...common, entryPoints: { 'buckley-lsp-editor-mcp': source('coordinator/agents/editorMcpRelay.ts') } });
await writeFile(entry, `#!/usr/bin/env node\n${await readFile(entry, 'utf8')}`);
await chmod(entry, 0o755);
