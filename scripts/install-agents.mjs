#!/usr/bin/env node
// Installs the real ACP agents the tests drive — Claude Code (@zed-industries/claude-agent-acp and
// the older claude-code-acp), Codex (@zed-industries/codex-acp with its linux-x64 binary), Gemini
// CLI, Qwen Code, opencode (opencode-ai), Kilo Code (@kilocode/cli, with its linux-x64 binary),
// GitHub Copilot CLI (@github/copilot), Factory Droid (droid, with its linux-x64 binary) and Cline
// (cline, with its linux-x64 binary) — and acpx, a command-line ACP client the tests drive
// `buckley-lsp acp` with — at the versions pinned in scripts/agents/ (package.json and its lock),
// from the npm registry, into a folder of the project's own (default `.agents/`, where the tests
// look):
//
//   node scripts/install-agents.mjs [--dest DIR]
//   node scripts/install-agents.mjs --copilot [--dest DIR]
//
// With --copilot, instead: GitHub's Copilot language server, pinned in scripts/copilot/, into
// `.copilot/` — not an agent, the other AI language server `npm run bench` compares startup and
// idle memory with (optional: without it the bench compares with a bare server only).
//
// `npm install` with the lock, not `npm ci`: npm 11 refuses that lock for the optional platform
// packages it leaves out of it (Qwen's clipboard). Install scripts are not run — node-pty, an optional
// native terminal of Gemini and Qwen, is left out — but opencode's, which puts its binary in place.
// Running it again with the same lock does nothing.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const copilot = args.includes('--copilot');
const here = new URL(copilot ? './copilot/' : './agents/', import.meta.url).pathname;
const destAt = args.indexOf('--dest');
const dest = resolve(destAt === -1 ? (copilot ? '.copilot' : '.agents') : args[destAt + 1]);
mkdirSync(dest, { recursive: true });

const lock = readFileSync(join(here, 'package-lock.json'), 'utf8');
const stamp = join(dest, '.installed-lock.json');
if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== lock) {
  copyFileSync(join(here, 'package.json'), join(dest, 'package.json'));
  writeFileSync(join(dest, 'package-lock.json'), lock);
  const run = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: dest, stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) {
    process.stderr.write(`install-agents: npm install in ${dest} failed (exit ${run.status ?? run.signal}); ${copilot ? 'the bench compares with a bare server only' : "the agents' tests will be skipped"}\n`);
    process.exit(1);
  }
  // opencode places its binary with its own install script (a stub stands there until then):
  // that one script is run, as `npm install -g opencode-ai` would run it.
  if (!copilot) {
    const rebuild = spawnSync('npm', ['rebuild', 'opencode-ai', '--ignore-scripts=false', '--loglevel=error'], { cwd: dest, stdio: ['ignore', 'inherit', 'inherit'] });
    if (rebuild.status !== 0) {
      process.stderr.write(`install-agents: placing opencode's binary in ${dest} failed (exit ${rebuild.status ?? rebuild.signal}); its tests will fail\n`);
      process.exit(1);
    }
  }
  writeFileSync(stamp, lock);
}

const { dependencies } = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
for (const name of Object.keys(dependencies)) {
  const manifest = JSON.parse(readFileSync(join(dest, 'node_modules', name, 'package.json'), 'utf8'));
  const bins = typeof manifest.bin === 'string' ? [manifest.name.split('/').pop()] : Object.keys(manifest.bin ?? {});
  process.stdout.write(`${name.padEnd(36)} ${manifest.version.padEnd(8)} ${bins.map((bin) => join(dest, 'node_modules/.bin', bin)).join(' ')}\n`);
}
