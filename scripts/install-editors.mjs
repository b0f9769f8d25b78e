#!/usr/bin/env node
// Installs the real editors the end-to-end tests drive, from Debian's packages, into a folder of
// the project's own (default `.editors/`, where the tests look), without touching the system
// beyond Debian 12's own neovim:
//
//   node scripts/install-editors.mjs [--dest DIR] [nvim-0.7] [nvim-0.10] [helix-25.01] [emacs-30.1] [emacs-28.2] [nvim-0.12]
//
//   nvim-0.7     Debian 12's neovim, installed with apt-get (root or sudo -n)   → DIR/bin/nvim-0.7
//   nvim-0.10    Debian 13's neovim 0.10                                        → DIR/bin/nvim-0.10
//   helix-25.01  Debian 13's hx 25.01 (and Debian 12's tmux, to drive it)        → DIR/bin/hx-25.01
//   emacs-30.1   Debian 13's emacs-nox 30.1, whose built-in eglot is 1.17       → DIR/bin/emacs-30.1
//   emacs-28.2   Debian 12's emacs-nox 28.2 and elpa-eglot 1.9, with apt-get      → DIR/bin/emacs-28.2
//   nvim-0.12    Debian sid's neovim 0.12 (LSP 3.18: inline completions)         → DIR/bin/nvim-0.12
//
// The Debian 13 editors come from a private apt configuration under DIR/apt (the machine's own
// Debian mirror, suite trixie, its own lists and cache): each editor's packages are unpacked
// into DIR/<editor>, the libraries they need (with trixie's C library) into DIR/sysroot, and the
// editor binary is patched (patchelf, also from trixie) to load through that C library. A
// wrapper in DIR/bin sets the editor's runtime paths. Debian sid's (nvim-0.12) the same way, with
// its own apt-sid, sysroot-sid and tools-sid: sid's C library is newer than trixie's, and the
// trixie editors must keep theirs. Running it again skips what is done.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const EDITORS = {
  'nvim-0.7': { system: () => installSystemNeovim() },
  'emacs-28.2': { system: () => installSystemEmacs() },
  'nvim-0.10': { version: /^0\.10\./, packages: ['neovim', 'neovim-runtime'], binary: 'usr/bin/nvim', wrapper: 'nvim-0.10', env: (root) => ({ VIMRUNTIME: `${root}/usr/share/nvim/runtime`, VIM: `${root}/usr/share/nvim` }) },
  'helix-25.01': { version: /^25\.01/, packages: ['hx'], binary: 'usr/bin/hx', wrapper: 'hx-25.01', env: (root) => ({ HELIX_RUNTIME: `${root}/usr/lib/hx/runtime` }) },
  // sid moves: once it has another Neovim, this one is skipped (its test says so), not a failed install.
  'nvim-0.12': { suite: 'sid', optional: true, version: /^0\.12\./, packages: ['neovim', 'neovim-runtime'], binary: 'usr/bin/nvim', wrapper: 'nvim-0.12', env: (root) => ({ VIMRUNTIME: `${root}/usr/share/nvim/runtime`, VIM: `${root}/usr/share/nvim` }) },
  'emacs-30.1': {
    version: /^1:30\.1/,
    packages: ['emacs-nox', 'emacs-bin-common', 'emacs-common'],
    binary: 'usr/bin/emacs-nox',
    wrapper: 'emacs-30.1',
    env: (root) => {
      const share = `${root}/usr/share/emacs/30.1`;
      return { EMACSLOADPATH: `${share}/lisp`, EMACSDATA: `${share}/etc`, EMACSDOC: `${share}/etc`, EMACSPATH: `${root}/usr/libexec/emacs/30.1/x86_64-linux-gnu` };
    },
  },
};
/** Where the editors of most of them come from; an editor may name another (`suite`). */
const TRIXIE = 'trixie';

const args = process.argv.slice(2);
const destAt = args.indexOf('--dest');
const dest = resolve(destAt === -1 ? '.editors' : args.splice(destAt, 2)[1]);
const wanted = args.length ? args : Object.keys(EDITORS);
for (const name of wanted) if (!(name in EDITORS)) fail(`unknown editor ${name}; known: ${Object.keys(EDITORS).join(', ')}`);

/** A suite's private folders: apt, the sysroot of its libraries, its tools (patchelf). */
function release(suite) {
  const suffix = suite === TRIXIE ? '' : `-${suite}`;
  const sysroot = join(dest, `sysroot${suffix}`);
  const libdir = join(sysroot, 'usr/lib/x86_64-linux-gnu');
  const aptDir = join(dest, `apt${suffix}`);
  return { suite, sysroot, libdir, loader: join(libdir, 'ld-linux-x86-64.so.2'), aptDir, aptConf: join(aptDir, 'apt.conf'), tools: join(dest, `tools${suffix}`) };
}
mkdirSync(join(dest, 'bin'), { recursive: true });

function fail(message) {
  process.stderr.write(`install-editors: ${message}\n`);
  process.exit(1);
}

/** Runs a command; its output on failure, with what was being done. */
function run(what, command, commandArgs, options = {}) {
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.status !== 0) fail(`${what} failed (${command} ${commandArgs.join(' ')}):\n${(result.stderr || result.stdout || String(result.error ?? '')).split('\n').slice(-20).join('\n')}`);
  return result.stdout;
}

const asRoot = (command, commandArgs) => (process.getuid?.() === 0 ? [command, commandArgs] : ['sudo', ['-n', command, ...commandArgs]]);

function writeWrapper(name, binary, env) {
  const lines = ['#!/bin/sh', `# written by scripts/install-editors.mjs: ${binary}`, ...Object.entries(env).map(([key, value]) => `${key}='${value}'; export ${key}`), `exec '${binary}' "$@"`, ''];
  const path = join(dest, 'bin', name);
  writeFileSync(`${path}.tmp`, lines.join('\n'));
  chmodSync(`${path}.tmp`, 0o755);
  renameSync(`${path}.tmp`, path);
  return path;
}

/** Installs a package of the machine's own Debian release (root or sudo -n), unless it is there. */
function installSystemPackage(name, wanted = () => true) {
  const installed = spawnSync('dpkg-query', ['-W', '-f=${Status} ${Version}', name], { encoding: 'utf8' });
  if (installed.status === 0 && installed.stdout.startsWith('install ok installed') && wanted(installed.stdout.split(' ').pop())) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = asRoot('apt-get', ['install', '-y', '-q', '--no-install-recommends', name]);
  if (spawnSync(...install, { env, stdio: 'ignore' }).status !== 0) {
    run('apt-get update', ...asRoot('apt-get', ['update', '-q']), { env });
    run(`installing ${name}`, ...install, { env });
  }
}

function installSystemNeovim() {
  installSystemPackage('neovim', (version) => version.startsWith('0.7'));
  const version = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'neovim'], { encoding: 'utf8' });
  if (!version.startsWith('0.7')) fail(`the system's neovim is ${version}, not 0.7 (is this Debian 12?)`);
  return writeWrapper('nvim-0.7', '/usr/bin/nvim', {});
}

/** Debian 12's Emacs and eglot, system-wide: the wrapper puts eglot 1.9 on the load path (`-Q` loads no packages). */
function installSystemEmacs() {
  installSystemPackage('emacs-nox', (version) => version.startsWith('1:28.'));
  installSystemPackage('elpa-eglot', (version) => version.startsWith('1.9'));
  const versions = ['emacs-nox', 'elpa-eglot'].map((name) => execFileSync('dpkg-query', ['-W', '-f=${Version}', name], { encoding: 'utf8' }));
  if (!versions[0]?.startsWith('1:28.') || !versions[1]?.startsWith('1.9')) fail(`the system's emacs-nox and elpa-eglot are ${versions.join(' and ')}, not 28 and 1.9 (is this Debian 12?)`);
  const eglot = ['/usr/share/emacs/site-lisp/elpa/eglot-1.9', '/usr/share/emacs/site-lisp/elpa-src/eglot-1.9'].find((dir) => existsSync(dir));
  if (!eglot) fail('elpa-eglot 1.9 is installed but its directory is not where Debian 12 puts it');
  // The trailing colon keeps Emacs's own load path after it.
  return writeWrapper('emacs-28.2', '/usr/bin/emacs-nox', { EMACSLOADPATH: `${eglot}:` });
}

/** The machine's Debian mirror for its own release, with its options, from the one-line or deb822 sources. */
function debianMirror(codename) {
  const files = ['/etc/apt/sources.list', ...readdirSync('/etc/apt/sources.list.d').map((name) => `/etc/apt/sources.list.d/${name}`)].filter((path) => existsSync(path));
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    if (path.endsWith('.list')) {
      for (const line of text.split('\n')) {
        const match = /^\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)$/.exec(line);
        if (match && match[3] === codename && match[4].split(/\s+/).includes('main')) return { uri: match[2], options: (match[1] ?? '').trim() };
      }
    } else if (path.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (name) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(stanza.split('\n').filter((line) => !line.startsWith('#')).join('\n'))?.[1]?.trim();
        if (!(field('Types') ?? '').split(/\s+/).includes('deb') || (field('Enabled') ?? 'yes').toLowerCase() === 'no') continue;
        if (!(field('Suites') ?? '').split(/\s+/).includes(codename) || !(field('Components') ?? '').split(/\s+/).includes('main')) continue;
        const signedBy = field('Signed-By');
        return { uri: field('URIs').split(/\s+/)[0], options: signedBy ? `[signed-by=${signedBy}]` : '' };
      }
    }
  }
  fail(`no Debian source for ${codename} with component main in /etc/apt`);
}

const aptReady = new Set();
function privateApt({ suite, aptDir, aptConf }) {
  if (aptReady.has(suite)) return;
  const codename = /^VERSION_CODENAME=(.*)$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1]?.replace(/"/g, '');
  if (!codename) fail('cannot tell the Debian release from /etc/os-release');
  const mirror = debianMirror(codename);
  for (const sub of ['lists/partial', 'cache/archives/partial', 'sources.list.d', 'preferences.d']) mkdirSync(join(aptDir, sub), { recursive: true });
  if (!existsSync(join(aptDir, 'status'))) writeFileSync(join(aptDir, 'status'), '');
  writeFileSync(join(aptDir, 'sources.list'), `deb ${mirror.options ? `${mirror.options} ` : ''}${mirror.uri} ${suite} main\n`);
  writeFileSync(
    aptConf,
    [
      `Dir::Etc::sourcelist "${aptDir}/sources.list";`,
      `Dir::Etc::sourceparts "${aptDir}/sources.list.d";`,
      `Dir::Etc::preferences "${aptDir}/preferences";`,
      `Dir::Etc::preferencesparts "${aptDir}/preferences.d";`,
      `Dir::State::lists "${aptDir}/lists";`,
      `Dir::State::status "${aptDir}/status";`,
      `Dir::Cache "${aptDir}/cache";`,
      `Dir::Cache::archives "${aptDir}/cache/archives";`,
      `Dir::Cache::pkgcache "${aptDir}/cache/pkgcache.bin";`,
      'Dir::Cache::srcpkgcache "";',
      'APT::Sandbox::User "root";',
      'Acquire::Languages "none";',
      // The machine's apt hooks are not ours to run.
      '#clear APT::Update::Pre-Invoke;',
      '#clear APT::Update::Post-Invoke;',
      '#clear APT::Update::Post-Invoke-Success;',
      '#clear DPkg::Pre-Invoke;',
      '#clear DPkg::Post-Invoke;',
      '',
    ].join('\n'),
  );
  const stamp = join(aptDir, 'updated');
  const fresh = existsSync(stamp) && Date.now() - Number(readFileSync(stamp, 'utf8')) < 24 * 3600 * 1000;
  if (!fresh) {
    run(`reading the ${suite} package lists`, 'apt-get', ['-c', aptConf, '-q', 'update']);
    writeFileSync(stamp, String(Date.now()));
  }
  aptReady.add(suite);
}

const aptCache = ({ aptConf }, ...commandArgs) => run('apt-cache', 'apt-cache', ['-c', aptConf, ...commandArgs]);

/** The packages and the runtime libraries they depend on (not compilers or tools: lib*, lua-*, zlib*). */
function withLibraries(from, packages) {
  const seen = new Set(packages);
  let frontier = [...packages];
  while (frontier.length) {
    const output = aptCache(from, 'depends', '--no-recommends', '--no-suggests', '--no-conflicts', '--no-breaks', '--no-replaces', '--no-enhances', ...frontier);
    frontier = [];
    for (const match of output.matchAll(/^\s*\|?(?:Pre)?Depends:\s+([^\s<]+)/gm)) {
      const name = match[1];
      if (seen.has(name) || /-(dev|bin|data)$/.test(name) || !/^(lib|lua-|zlib)/.test(name)) continue;
      seen.add(name);
      frontier.push(name);
    }
  }
  return [...seen];
}

/** Downloads the packages into the private cache; their .deb paths. */
function download({ aptDir, aptConf }, packages) {
  const archives = join(aptDir, 'cache/archives');
  const uris = run('resolving the packages', 'apt-get', ['-c', aptConf, '-q', '--print-uris', 'download', ...packages]);
  const files = [...uris.matchAll(/^'[^']+'\s+(\S+\.deb)\s/gm)].map((match) => match[1]);
  const missing = files.filter((file) => !existsSync(join(archives, file))).map((file) => file.split('_')[0]);
  if (missing.length) run('downloading the packages', 'apt-get', ['-c', aptConf, '-q', 'download', ...missing], { cwd: archives });
  return files.map((file) => join(archives, file));
}

function unpack(debs, into) {
  mkdirSync(into, { recursive: true });
  for (const deb of debs) run(`unpacking ${deb}`, 'dpkg-deb', ['-x', deb, into]);
}

/** Unpacks packages from a private suite: the named ones into `root`, their libraries into its sysroot. */
function installFrom(from, packages, root) {
  privateApt(from);
  const all = withLibraries(from, packages);
  const debs = download(from, all);
  const own = (deb) => packages.some((name) => deb.split('/').pop().startsWith(`${name}_`));
  unpack(debs.filter(own), root);
  unpack(debs.filter((deb) => !own(deb)), from.sysroot);
  if (!existsSync(from.loader)) fail(`no C library loader at ${from.loader} after unpacking`);
}

/** Has the binary load through its suite's C library and find its libraries there. */
function patch(from, binary) {
  const { loader, libdir } = from;
  const patchelf = join(from.tools, 'usr/bin/patchelf');
  if (!existsSync(patchelf)) installFrom(from, ['patchelf'], from.tools);
  run('patchelf', loader, ['--library-path', libdir, patchelf, '--set-interpreter', loader, '--set-rpath', libdir, '--force-rpath', binary]);
  const linked = run(`loading ${binary}`, loader, ['--list', binary]);
  if (/not found/.test(linked)) fail(`libraries missing for ${binary}:\n${linked}`);
}

function installEditor(name) {
  const editor = EDITORS[name];
  if (editor.system) return editor.system();
  // The Helix tests drive it in tmux.
  if (name === 'helix-25.01') installSystemPackage('tmux');
  const root = join(dest, name);
  const from = release(editor.suite ?? TRIXIE);
  if (!existsSync(join(root, '.done'))) {
    privateApt(from);
    const candidate = /Candidate:\s*(\S+)/.exec(aptCache(from, 'policy', editor.packages[0]))?.[1] ?? 'none';
    if (!editor.version.test(candidate)) {
      const why = `${from.suite}'s ${editor.packages[0]} is ${candidate}, not the version this script installs`;
      if (!editor.optional) fail(why);
      process.stderr.write(`install-editors: skipping ${name}: ${why} (its tests are skipped)\n`);
      return undefined;
    }
    rmSync(root, { recursive: true, force: true });
    installFrom(from, editor.packages, root);
    patch(from, join(root, editor.binary));
    if (name === 'emacs-30.1') {
      // Emacs finds its dump file next to the executable.
      const exec = editor.env(root).EMACSPATH;
      const dump = readdirSync(exec).find((file) => /^emacs-.*\.pdmp$/.test(file));
      if (!dump) fail(`no Emacs dump file in ${exec}`);
      symlinkSync(join(exec, dump), join(root, 'usr/bin/emacs-nox.pdmp'));
    }
    writeFileSync(join(root, '.done'), '');
  }
  return writeWrapper(editor.wrapper, join(root, editor.binary), editor.env(root));
}

for (const name of wanted) {
  const wrapper = installEditor(name);
  if (!wrapper) continue;
  const probe = name.startsWith('emacs') ? ['-Q', '--batch', '--eval', '(princ emacs-version)'] : ['--version'];
  const version = spawnSync(wrapper, probe, { encoding: 'utf8' });
  if (version.status !== 0) fail(`${wrapper} does not run: ${version.stderr}`);
  process.stdout.write(`${name.padEnd(12)} ${(version.stdout || version.stderr).split('\n')[0].trim().padEnd(24)} ${wrapper}\n`);
}
