// An editor's wrapper: starts the server (argv: the bin and its arguments) and relays stdio, so
// the server's parent is this process. It says the server's pid on stderr ("server pid N").
import { spawn } from 'node:child_process';

const server = spawn(process.execPath, process.argv.slice(2), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stderr.write(`server pid ${server.pid}\n`);
process.stdin.pipe(server.stdin);
server.stdout.pipe(process.stdout);
server.on('exit', (code) => process.exit(code ?? 1));
