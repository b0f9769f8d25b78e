// Bundles bench/main.ts (it imports project modules directly) and runs it with the given flags.
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';

const outfile = new URL('../dist/bench.mjs', import.meta.url).pathname;
await build({
  entryPoints: [new URL('../bench/main.ts', import.meta.url).pathname],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
const run = spawnSync(process.execPath, [outfile, ...process.argv.slice(2)], { stdio: 'inherit', cwd: new URL('..', import.meta.url).pathname });
process.exit(run.status ?? 1);
