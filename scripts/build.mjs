// Bundles the CLI into one ESM file, dist/buckley-lsp.js. The .proto files stay in proto/
// and are found from the bundle's own location at run time.
import { build } from 'esbuild';
import { chmod, readFile } from 'node:fs/promises';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const outfile = new URL('../dist/buckley-lsp.js', import.meta.url).pathname;

await build({
  entryPoints: [new URL('../src/cli.ts', import.meta.url).pathname],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  define: { __BUCKLEY_VERSION__: JSON.stringify(pkg.version) },
  // grpc-js and protobufjs are CommonJS and call require() for Node built-ins.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __buckleyCreateRequire } from 'node:module';\nconst require = __buckleyCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
await chmod(outfile, 0o755);
