/**
 * Around the whole run: one temporary directory that every test's temporary files go into
 * (test/helpers/temp.ts), removed at the end; and the list of real-editor and real-agent tests
 * skipped because their editor or agent is not installed here, with the command that installs
 * each (CI runs them all).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentInstalled, missingAgentLine, REAL_AGENTS } from './helpers/agents.js';
import { available, EDITORS, missingLine } from './helpers/editors.js';
import { missingNatsLine, natsInstalled } from './helpers/nats.js';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'buckley-tests-'));
  process.env.BUCKLEY_TEST_TMP = root;
  return () => {
    rmSync(root, { recursive: true, force: true });
    const missing = Object.values(EDITORS).filter((editor) => !available(editor));
    if (missing.length) process.stdout.write(`\nReal-editor tests skipped, their editor is not installed here:\n${missing.map((editor) => `  - ${missingLine(editor)}`).join('\n')}\n`);
    const agents = REAL_AGENTS.filter((agent) => !agentInstalled(agent));
    if (agents.length) process.stdout.write(`\nReal-agent tests skipped, the agent is not installed here:\n${agents.map((agent) => `  - ${missingAgentLine(agent)}`).join('\n')}\n`);
    if (!natsInstalled()) process.stdout.write(`\nNATS tests skipped: ${missingNatsLine()}\n`);
  };
}
