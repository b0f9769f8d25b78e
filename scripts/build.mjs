// Bundles the CLI for speed: dist/buckley-lsp.js is the one entry (the `bin`), and code the
// language server does not need to answer `initialize` (gRPC, protobuf, the coordinator, agent
// drivers) sits in chunks next to it, loaded by dynamic import() only when first used — so
// startup compiles only what it runs. The .proto files stay in proto/ and are found from the
// chunks' location (dist/, like the entry) at run time.
import { build } from 'esbuild';
import { chmod, readdir, readFile, rm, writeFile } from 'node:fs/promises';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const outdir = new URL('../dist/', import.meta.url).pathname;
const entry = `${outdir}buckley-lsp.js`;

// Chunks of an earlier build have other names: remove them, not the bench bundles.
for (const name of await readdir(outdir).catch(() => [])) {
  if (/^(buckley-lsp|chunk-)/.test(name)) await rm(`${outdir}${name}`);
}
await build({
  entryPoints: {
    'buckley-lsp': new URL('../src/cli.ts', import.meta.url).pathname,
    // The embedded coordinator's worker thread (src/coordinator/embedded.ts loads it by this name).
    'buckley-lsp-embedded': new URL('../src/coordinator/embeddedWorker.ts', import.meta.url).pathname,
  },
  outdir,
  splitting: true,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  define: { __BUCKLEY_VERSION__: JSON.stringify(pkg.version) },
  // grpc-js and protobufjs are CommonJS and call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __buckleyCreateRequire } from 'node:module';\nconst require = __buckleyCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
await writeFile(entry, `#!/usr/bin/env node\n${await readFile(entry, 'utf8')}`);
await chmod(entry, 0o755);
