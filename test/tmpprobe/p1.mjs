import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync } from 'node:fs';
const home = mkdtempSync('/tmp/probe-');
const child = spawn(process.execPath, ['dist/buckley-lsp.js', 'acp', '--agent', `${process.execPath} /work/main/fixtures/scripted-agent.mjs`], { env: { PATH: (process.env.PROBE_PATH ?? '') + process.env.PATH, HOME: home, XDG_STATE_HOME: home, XDG_CONFIG_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
child.stderr.on('data', (d) => process.stderr.write('ERR ' + d));
const rl = createInterface({ input: child.stdout });
const waiters = new Map();
rl.on('line', (l) => { const m = JSON.parse(l); if (m.id !== undefined && !m.method) { waiters.get(m.id)?.(m); } else console.log('<<', l.slice(0, 300)); if (m.method && m.id !== undefined) child.stdin.write(JSON.stringify({jsonrpc:'2.0', id: m.id, result: {outcome:{outcome:'selected', optionId: 'allow'}}})+'\n'); });
let n = 0;
const req = (method, params) => new Promise((r) => { const id = ++n; waiters.set(id, r); child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n'); });
const steps = JSON.parse(process.argv[2]);
console.log(JSON.stringify(await req('initialize', { protocolVersion: 1, clientCapabilities: {} })).slice(0,200));
let sid;
for (const [method, params] of steps) {
  const p = JSON.parse(JSON.stringify(params).replaceAll('$SID', sid ?? ''));
  const a = await req(method, p);
  if (a.result?.sessionId) sid = a.result.sessionId;
  console.log('>>', method, JSON.stringify(a).slice(0, 600));
}
child.stdin.end();
