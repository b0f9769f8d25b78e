// Bundles bench/main.ts and bench/forwarder.ts (they import project modules directly) and the
// bare echo server, and runs the benchmarks with the given flags.
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';

const outfile = new URL('../dist/bench.mjs', import.meta.url).pathname;
await build({
  entryPoints: {
    bench: new URL('../bench/main.ts', import.meta.url).pathname,
    'bench-forwarder': new URL('../bench/forwarder.ts', import.meta.url).pathname,
  },
  outdir: new URL('../dist', import.meta.url).pathname,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
// The baseline server, bundled like the bin so their startups compare like with like.
await build({
  entryPoints: [new URL('../bench/echo-server.mjs', import.meta.url).pathname],
  outfile: new URL('../dist/bench-echo-server.mjs', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: "import { createRequire as __benchCreateRequire } from 'node:module';\nconst require = __benchCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
const run = spawnSync(process.execPath, [outfile, ...process.argv.slice(2)], { stdio: 'inherit', cwd: new URL('..', import.meta.url).pathname });
process.exit(run.status ?? 1);
