/**
 * The demo (`npm run demo`, the README's quick start), run as it is: a whole session against the
 * embedded coordinator and the ACP SDK's example agent ends, in order, with every step shown.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

it('plays a whole editor session to its end: an answer, a task with an approval, a clean exit; it leaves nothing behind', async () => {
  const tmp = tempDir('buckley-demo-tmp');
  const demo = spawn(process.execPath, [`${REPO}scripts/demo.mjs`], { cwd: REPO, env: { PATH: process.env.PATH, HOME: tmp, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  demo.stdout.on('data', (chunk) => (output += chunk));
  demo.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => demo.once('close', resolve));
  expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
  const steps = [
    'it gives the same canned answer to every question',
    'server  ← showMessage (info): answered «Explain what this code does and…»: answer opened',
    'editor  → hover inside the selection',
    'editor  → buckley/executeTask "Update the configuration"',
    'editor  → choose [Deny]',
    'server  ← showMessage (info): done «Update the configuration»: answer opened',
    'server exited with code 0; the source file was never modified.',
  ];
  let from = 0;
  for (const step of steps) {
    const at = output.indexOf(step, from);
    expect(at, `"${step}" after position ${from}`).toBeGreaterThanOrEqual(0);
    from = at + step.length;
  }
  expect(readdirSync(tmp)).toEqual([]);
}, 90_000);
