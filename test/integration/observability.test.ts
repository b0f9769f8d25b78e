/** Observability: --log-file, one debug line per request, and traceparent carried to the coordinator. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCoordinatorProcess } from '../helpers/coordinators.js';
import { startingClients } from '../helpers/lspClient.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const start = startingClients();

describe('observability', () => {
  it('logs each request with its duration and outcome to --log-file, and the coordinator sees the same traceparent', async () => {
    const coordinator = await startCoordinatorProcess(['--log-level', 'debug', '--agent', process.execPath, SCRIPTED_AGENT]);
    let coordinatorLog = '';
    coordinator.process.stderr!.on('data', (chunk) => (coordinatorLog += chunk));
    try {
      const logFile = join(tempDir('buckley-log'), 'buckley.log');
      const logged = await start({ args: ['--coordinator', coordinator.address, '--log-level', 'debug', '--log-file', logFile] });
      await logged.request('buckley/ask', { question: 'Traced?' });
      await expect(logged.request('buckley/ask', { question: '' })).rejects.toMatchObject({ code: -32602 });
      await logged.shutdown();

      const log = readFileSync(logFile, 'utf8');
      expect(statSync(logFile).mode & 0o777).toBe(0o600);
      expect(log).toMatch(/^\S+Z \[debug\] buckley\/ask \d+\.\d ms ok$/m);
      expect(log).toMatch(/^\S+Z \[debug\] buckley\/ask \d+\.\d ms error -32602: params\.question: question must not be empty$/m);
      const traceparent = /traceparent (00-[0-9a-f]{32}-[0-9a-f]{16}-01)/.exec(log)?.[1];
      expect(traceparent).toBeDefined();
      expect(coordinatorLog).toContain(`traceparent ${traceparent}`);
    } finally {
      await coordinator.stop();
    }
  });
});
