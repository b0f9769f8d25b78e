/**
 * How risky a shell command is, from what it runs: every simple command of the script (pipelines,
 * `&&` chains, substitutions, `sh -c` scripts, `xargs` and `find -exec` commands, wrappers such
 * as `sudo`, `env`, `timeout`, `npx`) is looked at by its program and its arguments. A shell
 * command is at least `high`; it is `destructive` when it deletes or overwrites data (rm -r/-f,
 * find -delete, truncating redirections, dd, mkfs, shred), discards or rewrites history (git
 * reset --hard, clean -f, push --force), writes outside the workspace, changes permissions
 * recursively, runs as another user, runs code from the network, or sends credentials away.
 */
import { basename } from 'node:path';
import { Findings, type Risk } from './findings.js';
import { describePath, type Place } from './paths.js';
import { allCommands, MAX_SCRIPT_CHARS, parseShell, type SimpleCommand } from './shell.js';

const MAX_DEPTH = 6;

/** Findings for a command line, or an argv array (`["bash", "-lc", "…"]`). */
export function assessCommand(command: string | string[], place: Place, depth = 0): Findings {
  const findings = new Findings();
  findings.add('high', 'runs a shell command');
  if (depth > MAX_DEPTH) {
    findings.add('destructive', 'nests commands too deeply to check');
    return findings;
  }
  let commands: SimpleCommand[];
  if (Array.isArray(command)) {
    commands = [{ words: command, redirects: [], feeders: [], stdinText: [], substitutions: [] }];
  } else {
    if (command.length > MAX_SCRIPT_CHARS) findings.add('destructive', 'is too long to check');
    if (/(^|[\s;&|])([\w:]+)\s*\(\)\s*\{[^}]*\2\s*\|\s*\2/.test(command)) findings.add('destructive', 'is a fork bomb');
    commands = parseShell(command);
  }
  const all = allCommands(commands);
  for (const simple of all) assessSimple(simple, simple.cd ? { ...place, cwd: joinCwd(place.cwd, simple.cd) } : place, findings, depth);
  exfiltration(all, place, findings);
  return findings;
}

function joinCwd(base: string | undefined, cd: string): string {
  return base === undefined || /^[/~$]/.test(cd) ? cd : `${base}/${cd}`;
}

const ELEVATE = new Set(['sudo', 'doas', 'su', 'pkexec', 'run0', 'sudoedit']);
/** Wrappers that run the rest of their arguments as a command: [options taking a value]. */
const WRAPPERS: Record<string, string[]> = {
  env: ['-u', '--unset', '-C', '--chdir', '-S', '--split-string'],
  nice: ['-n', '--adjustment'],
  ionice: ['-c', '-n', '-p', '-t'],
  nohup: [],
  time: ['-f', '-o'],
  timeout: ['-s', '--signal', '-k', '--kill-after'],
  stdbuf: ['-i', '-o', '-e'],
  command: [],
  builtin: [],
  exec: ['-a'],
  unbuffer: [],
  setsid: [],
  chrt: [],
  taskset: [],
  watch: ['-n', '--interval', '-d'],
  xargs: ['-I', '-i', '-n', '-L', '-l', '-P', '-d', '-E', '-e', '-s', '-a', '--arg-file', '--delimiter', '--max-args', '--max-procs', '--replace'],
  npx: ['-p', '--package', '-c', '--call'],
  bunx: ['-p', '--package'],
  pnpx: [],
  uvx: ['--from', '--with', '-p', '--python'],
  doppler: [],
  'xvfb-run': ['-a', '-n', '-s'],
  busybox: [],
};
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'ash', 'mksh']);
const INTERPRETERS = new Set(['python', 'python2', 'python3', 'perl', 'ruby', 'node', 'nodejs', 'deno', 'bun', 'php', 'lua', 'pwsh', 'powershell', 'osascript', 'Rscript']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'http', 'https', 'aria2c', 'lwp-download', 'xh', 'iwr', 'invoke-webrequest']);
const NETWORK = new Set([...DOWNLOADERS, 'nc', 'ncat', 'netcat', 'socat', 'scp', 'sftp', 'ftp', 'ssh', 'rsync', 'telnet', 'openssl']);
const WIPERS = new Set(['shred', 'wipefs', 'mke2fs', 'mkswap', 'fdisk', 'sfdisk', 'cfdisk', 'parted', 'sgdisk', 'gdisk', 'blkdiscard', 'rimraf', 'srm', 'del-cli']);
const POWER = new Set(['shutdown', 'reboot', 'halt', 'poweroff']);
const DATABASES = new Set(['psql', 'mysql', 'mariadb', 'sqlite3', 'sqlite', 'mongo', 'mongosh', 'cqlsh', 'clickhouse-client', 'duckdb', 'sqlcmd']);
const DESTRUCTIVE_SQL = [/\bdrop\s+(table|database|schema|index|view|user|role)\b/i, /\btruncate\s+(table\s+)?\w/i, /\bdelete\s+from\s+[\w."]+\s*(;|$)/i, /\bdb\.dropDatabase\(|\.drop\(\)|\.deleteMany\(\s*\{\s*\}\s*\)/];

function programOf(word: string | undefined): string {
  return basename((word ?? '').replace(/^\\/, ''));
}

/** The words after `words[0]`'s options (values of `withValue` options skipped), from the first operand on. */
function afterOptions(words: string[], withValue: string[] = []): string[] {
  let i = 1;
  while (i < words.length) {
    const word = words[i]!;
    if (word === '--') return words.slice(i + 1);
    if (!word.startsWith('-') || word === '-') break;
    i += withValue.includes(word) ? 2 : 1;
  }
  return words.slice(i);
}

function options(words: string[]): string[] {
  const end = words.indexOf('--');
  return (end === -1 ? words : words.slice(0, end)).slice(1).filter((word) => word.startsWith('-') && word !== '-');
}

function operands(words: string[]): string[] {
  const end = words.indexOf('--');
  const before = (end === -1 ? words : words.slice(0, end)).slice(1).filter((word) => !word.startsWith('-') || word === '-');
  return end === -1 ? before : [...before, ...words.slice(end + 1)];
}

/** A short option cluster or long option is among `opts`: `hasFlag(opts, 'r', '--recursive')` matches -r, -rf, -fr, --recursive. */
function hasFlag(opts: string[], short: string, ...long: string[]): boolean {
  return opts.some((opt) => (opt.startsWith('--') ? long.some((name) => opt === name || opt.startsWith(`${name}=`)) : short !== '' && [...short].some((letter) => opt.slice(1).includes(letter))));
}

/** Where writing loses nothing: /dev/null, the terminal, a descriptor. */
function isSink(target: string): boolean {
  return /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/.test(target);
}

const DELETERS = new Set(['rm', 'unlink', 'rmdir', 'shred', 'srm', 'rimraf']);

/**
 * One simple command. `bulk`: it runs on a list of files it is given (`xargs`, `find -exec`),
 * so a deleting program deletes an unbounded number of them.
 */
function assessSimple(command: SimpleCommand, place: Place, findings: Findings, depth: number, bulk = false): void {
  const unwrapped = unwrap(command.words, place, findings, depth);
  if (!unwrapped) return;
  const { words } = unwrapped;
  const program = programOf(words[0]);
  if (!program) return void redirections(command, place, findings);
  if (/^\$|`/.test(words[0]!)) {
    const fromNetwork = command.substitutions.some((inner) => DOWNLOADERS.has(programOf(inner.words[0])));
    findings.add(fromNetwork ? 'destructive' : 'high', fromNetwork ? 'runs code downloaded from the network' : 'runs a program chosen when it runs');
  }
  const opts = options(words);
  const args = operands(words);
  const path = (written: string) => describePath(written, place);
  const writesOutside = (targets: string[], verb: string, overwrite = false) => {
    for (const target of targets) {
      if (isSink(target)) continue;
      const facts = path(target);
      // A place only known when it runs ("$f" in a loop): the command's own risk stands.
      if (!facts.resolved) continue;
      if (!facts.inside) findings.add('destructive', `${verb} ${target} outside the workspace`);
      else if (facts.credential) findings.add(overwrite ? 'destructive' : 'high', `${verb} ${target} (${facts.credential})`);
      else if (facts.persistent) findings.add('high', `${verb} ${target}: ${facts.persistent}`);
    }
  };

  byProgram({ program, words, opts, args, command, place, findings, depth, bulk: bulk || unwrapped.bulk, writesOutside });
  if (SHELLS.has(program) || INTERPRETERS.has(program)) interpreter(program, words, command, place, findings, depth);
  redirections(command, place, findings);
}

/**
 * The wrappers a command runs under (sudo, env, xargs, timeout…), taken off: what they run is what
 * counts. `bulk`: under xargs. Undefined when what runs is judged already (`su -c`).
 */
function unwrap(given: string[], place: Place, findings: Findings, depth: number): { words: string[]; bulk: boolean } | undefined {
  let words = given;
  let bulk = false;
  // Wrappers: what they run is what counts.
  for (let layer = 0; layer < 8 && words.length > 0; layer++) {
    const program = programOf(words[0]);
    if (ELEVATE.has(program)) {
      findings.add('destructive', `runs as another user (${program})`);
      if (program === 'su') {
        const script = words[words.indexOf('-c') + 1];
        if (words.includes('-c') && script) findings.merge(assessCommand(script, place, depth + 1));
        return undefined;
      }
      words = afterOptions(words, ['-u', '--user', '-g', '--group', '-C', '-D', '--chdir', '-h', '--host', '-p', '--prompt', '-r', '-t', '-U']);
    } else if (program in WRAPPERS) {
      if (program === 'xargs') bulk = true;
      words = afterOptions(words, WRAPPERS[program]);
      if (program === 'env') while (words[0] && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words = words.slice(1);
      if (program === 'timeout' || program === 'nice' || program === 'chrt' || program === 'taskset') if (/^[\d.]+[smhd]?$|^0x/.test(words[0] ?? '')) words = words.slice(1);
    } else {
      break;
    }
  }
  return { words, bulk };
}

interface ProgramCall {
  program: string;
  words: string[];
  opts: string[];
  args: string[];
  command: SimpleCommand;
  place: Place;
  findings: Findings;
  depth: number;
  bulk: boolean;
  /** Judges the places it writes: outside the workspace, a credential, a persistent hook. */
  writesOutside(targets: string[], verb: string, overwrite?: boolean): void;
}

/** What the program does, by the program. */
function byProgram(call: ProgramCall): void {
  const { program, words, opts, args, command, place, findings, depth, bulk, writesOutside } = call;
  if (bulk && DELETERS.has(program)) findings.add('destructive', `deletes every file it is given (${program})`);
  if (WIPERS.has(program) || program.startsWith('mkfs')) findings.add('destructive', `destroys data (${program})`);
  else if (POWER.has(program)) findings.add('destructive', `shuts the machine down (${program})`);
  else if (program === 'rm' || program === 'unlink' || program === 'rmdir') {
    if (program === 'rm' && hasFlag(opts, 'rRf', '--recursive', '--force', '--dir')) findings.add('destructive', `deletes ${hasFlag(opts, 'rR', '--recursive') ? 'recursively' : 'without asking'} (rm ${opts.join(' ')})`);
    else findings.add('high', `deletes ${args.join(' ') || 'files'}`);
    writesOutside(args, 'deletes', true);
    if (args.some((arg) => /^(\*|\.|~\/?\*?|\/\*?)$/.test(arg))) findings.add('destructive', `deletes everything in ${args.join(' ')}`);
  } else if (program === 'dd') {
    const output = words.find((word) => word.startsWith('of='));
    if (output) findings.add('destructive', `writes raw data to ${output.slice(3)}`);
  } else if (program === 'truncate') {
    findings.add('destructive', 'empties files (truncate)');
  } else if (program === 'find') {
    find(words, place, findings, depth);
  } else if (program === 'git') {
    git(words, place, findings);
  } else if (program === 'chmod' || program === 'chown' || program === 'chgrp') {
    if (hasFlag(opts, 'R', '--recursive')) findings.add('destructive', `changes ownership or permissions recursively (${program} -R)`);
    const mode = program === 'chmod' ? args[0] : undefined;
    if (mode && /^[0-7]*[0-7][0-7][2367]$|[ao]\+[rwxst]*w|[ugo]*\+[rwx]*s/.test(mode)) findings.add('destructive', `makes files world-writable or setuid (chmod ${mode})`);
    writesOutside(args.slice(1), 'changes the permissions of');
  } else if (program === 'mv') {
    findings.add('high', 'moves files');
    writesOutside(args, 'moves', true);
  } else if (program === 'cp' || program === 'install' || program === 'ln') {
    const target = words[words.indexOf('-t') + 1] ?? words.find((word) => word.startsWith('--target-directory='))?.split('=')[1];
    writesOutside(words.includes('-t') && target ? [target] : args.slice(-1), 'writes', true);
  } else if (program === 'rsync') {
    if (opts.some((opt) => opt.startsWith('--delete') || opt === '--remove-source-files')) findings.add('destructive', 'deletes files it does not copy (rsync --delete)');
    const target = args.at(-1);
    if (target && !/^[^/]*:/.test(target)) writesOutside([target], 'writes', true);
  } else if (program === 'tee') {
    const files = args.filter((arg) => !isSink(arg));
    writesOutside(files, hasFlag(opts, 'a', '--append') ? 'appends to' : 'overwrites', !hasFlag(opts, 'a', '--append'));
    if (!hasFlag(opts, 'a', '--append') && files.length) findings.add('destructive', `overwrites ${files.join(' ')} (tee)`);
  } else if ((program === 'sed' || program === 'perl') && opts.some((opt) => /^-[a-zA-Z]*i|^--in-place/.test(opt))) {
    writesOutside(args.slice(1), 'edits', false);
  } else if (DOWNLOADERS.has(program)) {
    const at = words.findIndex((word) => ['-o', '--output', '-O', '--output-document'].includes(word));
    const output = at === -1 ? undefined : words[at + 1];
    if (output) writesOutside([output], 'downloads to', true);
  } else if (program === 'eval' || program === 'source' || program === '.') {
    if (program === 'eval') findings.merge(assessCommand(words.slice(1).join(' '), place, depth + 1));
  } else if (program === 'kill' || program === 'pkill' || program === 'killall') {
    // `kill -9 -1` signals every process it can; `kill 1`, init. (`kill -1 PID` is SIGHUP: fine.)
    if (program === 'kill' && words.length > 1 && /^-?1$/.test(words.at(-1)!)) findings.add('destructive', 'kills every process');
  } else if (program === 'systemctl' || program === 'init' || program === 'telinit') {
    if (args.some((arg) => /^(poweroff|reboot|halt|kexec|emergency|rescue|0|6)$/.test(arg))) findings.add('destructive', `shuts the machine down (${program} ${args.join(' ')})`);
  } else if (program === 'crontab') {
    if (hasFlag(opts, 'r')) findings.add('destructive', 'removes the crontab');
  } else if (DATABASES.has(program) || program === 'redis-cli') {
    const text = [...words.slice(1), ...command.stdinText].join('\n');
    if (DESTRUCTIVE_SQL.some((pattern) => pattern.test(text))) findings.add('destructive', `drops or empties database tables (${program})`);
    if (program === 'redis-cli' && /\bflush(all|db)\b/i.test(text)) findings.add('destructive', 'empties the Redis database');
  } else {
    infrastructure(program, args, opts, findings);
  }
}

/** `find … -delete`, `find … -exec rm {} ;`: what it does to each file it finds. */
function find(words: string[], place: Place, findings: Findings, depth: number): void {
  if (words.includes('-delete')) findings.add('destructive', 'deletes what it finds (find -delete)');
  for (let i = 0; i < words.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(words[i]!)) continue;
    const end = words.findIndex((word, j) => j > i && (word === ';' || word === '+'));
    const inner = words.slice(i + 1, end === -1 ? undefined : end);
    const innerFindings = new Findings();
    assessSimple({ words: inner, redirects: [], feeders: [], stdinText: [], substitutions: [] }, place, innerFindings, depth + 1, true);
    findings.merge(innerFindings);
    if (innerFindings.risk === 'destructive') findings.add('destructive', `runs ${programOf(inner[0])} on what it finds (find ${words[i]})`);
  }
  for (const option of ['-fprint', '-fprint0', '-fprintf', '-fls']) {
    const target = words[words.indexOf(option) + 1];
    if (words.includes(option) && target) findings.merge(writeFinding(target, place));
  }
}

function writeFinding(target: string, place: Place): Findings {
  const findings = new Findings();
  const facts = describePath(target, place);
  if (!facts.inside) findings.add('destructive', `writes ${target} outside the workspace`);
  return findings;
}

const GIT_OPTIONS_WITH_VALUE = ['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env'];

function git(words: string[], place: Place, findings: Findings): void {
  let i = 1;
  while (i < words.length && words[i]!.startsWith('-')) i += GIT_OPTIONS_WITH_VALUE.includes(words[i]!) ? 2 : 1;
  const sub = words[i];
  const rest = [sub ?? '', ...words.slice(i + 1)];
  const opts = options(rest);
  const args = operands(rest);
  const destroy = (why: string) => findings.add('destructive', `${why} (git ${words.slice(i).join(' ')})`);
  switch (sub) {
    case 'push':
      if (hasFlag(opts, 'fd', '--force', '--force-with-lease', '--force-if-includes', '--mirror', '--delete', '--prune') || args.some((arg) => /^[+:]/.test(arg))) destroy('rewrites or deletes remote history');
      break;
    case 'reset':
      if (hasFlag(opts, '', '--hard', '--merge', '--keep')) destroy('discards uncommitted changes');
      break;
    case 'clean':
      if (hasFlag(opts, 'f', '--force')) destroy('deletes untracked files');
      break;
    case 'checkout':
      if (rest.includes('--') || args.includes('.') || hasFlag(opts, 'f', '--force')) destroy('discards uncommitted changes');
      break;
    case 'restore':
      if (!(hasFlag(opts, 'S', '--staged') && !hasFlag(opts, 'W', '--worktree'))) destroy('discards uncommitted changes');
      break;
    case 'switch':
      if (hasFlag(opts, 'f', '--force', '--discard-changes')) destroy('discards uncommitted changes');
      break;
    case 'branch':
      if (opts.includes('-D') || opts.includes('-M') || (hasFlag(opts, 'd', '--delete') && hasFlag(opts, 'f', '--force'))) destroy('deletes a branch that is not merged');
      break;
    case 'stash':
      if (args[0] === 'drop' || args[0] === 'clear') destroy('deletes stashed changes');
      break;
    case 'reflog':
      if (args[0] === 'expire' || args[0] === 'delete') destroy('deletes history');
      break;
    case 'gc':
      if (opts.some((opt) => opt.startsWith('--prune'))) destroy('deletes unreachable history');
      break;
    case 'prune':
    case 'filter-branch':
    case 'filter-repo':
      destroy('rewrites or deletes history');
      break;
    case 'update-ref':
      if (hasFlag(opts, 'd')) destroy('deletes a ref');
      break;
    case 'rm':
      if (hasFlag(opts, 'rf', '--force')) destroy('deletes files');
      break;
    default:
      break;
  }
  const directory = words[words.indexOf('-C') + 1];
  if (words.includes('-C') && directory && !describePath(directory, place).inside) findings.add('high', `works on ${directory} outside the workspace`);
}

/** Cloud and container tools: deleting what they manage. */
function infrastructure(program: string, args: string[], opts: string[], findings: Findings): void {
  const first = args[0];
  const has = (...names: string[]) => names.some((name) => args.includes(name));
  const destroy = (why: string) => findings.add('destructive', `${why} (${program} ${args.slice(0, 3).join(' ')})`);
  if (program === 'kubectl' && has('delete', 'drain')) destroy('deletes cluster resources');
  else if (program === 'helm' && has('uninstall', 'delete')) destroy('uninstalls a release');
  else if ((program === 'terraform' || program === 'tofu' || program === 'pulumi') && (has('destroy') || opts.includes('-destroy'))) destroy('destroys infrastructure');
  else if ((program === 'docker' || program === 'podman') && (has('prune') || ((first === 'rm' || first === 'rmi' || has('rm')) && (opts.includes('-f') || opts.includes('--force') || has('volume'))))) destroy('deletes containers, images or volumes');
  else if (program === 'aws' && (args.some((arg) => /^delete-|^terminate-/.test(arg)) || (first === 's3' && has('rm', 'rb')))) destroy('deletes cloud resources');
  else if ((program === 'gsutil' && has('rm', 'rb')) || ((program === 'gcloud' || program === 'az') && has('delete'))) destroy('deletes cloud resources');
  else if ((program === 'npm' || program === 'pnpm' || program === 'yarn') && has('unpublish')) destroy('unpublishes a package');
  else if (program === 'gh' && has('delete')) destroy('deletes on GitHub');
}

/** Shells and interpreters: the script they are given, and where it comes from. */
function interpreter(program: string, words: string[], command: SimpleCommand, place: Place, findings: Findings, depth: number): void {
  const downloaded = (commands: SimpleCommand[]) => allCommands(commands).some((inner) => DOWNLOADERS.has(programOf(inner.words[0])));
  if (downloaded(command.feeders) || downloaded(command.substitutions)) findings.add('destructive', `runs code downloaded from the network (… | ${program})`);
  const shell = SHELLS.has(program);
  const inlineIndex = words.findIndex((word, i) => i > 0 && (shell ? /^-[a-zA-Z]*c[a-zA-Z]*$/.test(word) : ['-c', '-e', '-E', '--eval', '-p', '--print', '-r', '-x', '--command', '-Command'].includes(word)));
  const inline = inlineIndex === -1 ? undefined : words[inlineIndex + 1];
  const scripts = [...(inline !== undefined ? [inline] : []), ...command.stdinText];
  for (const script of scripts) {
    if (shell) findings.merge(assessCommand(script, place, depth + 1));
    else findings.merge(assessCode(script, place, depth));
  }
}

/** Code of another language given inline: its destructive calls, and the shell commands it quotes. */
const DESTRUCTIVE_CODE = /\b(shutil\.rmtree|os\.(remove|unlink|rmdir|removedirs)|rm_rf|FileUtils\.rm|File\.delete|Remove-Item)\b|\b(unlink|rmtree)\s*\(|\.(rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync)\s*\(/;

function assessCode(code: string, place: Place, depth: number): Findings {
  const findings = new Findings();
  if (DESTRUCTIVE_CODE.test(code)) findings.add('destructive', 'deletes files from inline code');
  for (const match of code.matchAll(/(["'`])((?:\\.|(?!\1).)*?)\1/g)) {
    const quoted = match[2]!;
    if (/\s/.test(quoted) && quoted.length < 4096) {
      const inner = assessCommand(quoted, place, depth + 1);
      if (inner.risk === 'destructive') findings.merge(inner);
    }
  }
  return findings;
}

function redirections(command: SimpleCommand, place: Place, findings: Findings): void {
  for (const { op, target } of command.redirects) {
    if (op === '<' || op === '<&' || (op === '>&' && /^\d+$|^-$/.test(target)) || isSink(target)) continue;
    if (/^\/dev\/(sd|hd|nvme|mmcblk|vd|xvd|disk|mapper|dm-|md|loop|sr)/.test(target)) {
      findings.add('destructive', `writes to the disk device ${target}`);
      continue;
    }
    const append = op === '>>' || op === '&>>';
    const facts = describePath(target, place);
    if (!append) findings.add('destructive', `overwrites ${target} (${op})`);
    else if (!facts.inside) findings.add('destructive', `appends to ${target} outside the workspace`);
    else if (facts.credential || facts.persistent) findings.add('destructive', `appends to ${target} (${facts.credential ?? facts.persistent})`);
  }
}

/** A script that reads credentials and talks to the network sends them away. */
function exfiltration(commands: SimpleCommand[], place: Place, findings: Findings): void {
  const network = commands.some((command) => NETWORK.has(programOf(command.words[0])));
  if (!network) return;
  for (const command of commands) {
    for (const word of [...command.words.slice(1), ...command.redirects.map((redirect) => redirect.target)]) {
      const candidate = word.replace(/^@/, '').replace(/^[\w-]+=/, '');
      if (!/[/.~]/.test(candidate)) continue;
      const facts = describePath(candidate, place);
      if (facts.credential) findings.add('destructive', `sends ${candidate} (${facts.credential}) over the network`);
    }
  }
}

export type { Risk };
