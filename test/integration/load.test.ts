/** Load from one editor: 100 concurrent asks and 10 tasks complete; beyond the limit, "busy". */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startingClients, type TestClient } from '../helpers/lspClient.js';

const start = startingClients();

/** Resident memory of the server process, in MB (Linux /proc). */
function rssMb(client: TestClient): number {
  const status = readFileSync(`/proc/${client.process.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

describe('load', () => {
  it('completes 100 concurrent asks and 10 concurrent tasks, with bounded memory', async () => {
    const client = await start({ initialize: { capabilities: { experimental: { buckley: { taskProgress: true } } } } });
    await client.request('buckley/ask', { question: 'warm up' });
    const before = rssMb(client);

    const asks = Array.from({ length: 100 }, (_, i) => client.request('buckley/ask', { question: `Question ${i}?` }));
    const tasks = await Promise.all(Array.from({ length: 10 }, (_, i) => client.request('buckley/executeTask', { task: `PLAN step ${i}` })));
    const answers = await Promise.all(asks);
    answers.forEach((result, i) => expect(result.answer).toContain(`You asked: Question ${i}?`));
    const finals = await Promise.all(
      tasks.map(({ taskId }) => client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && ['completed', 'failed', 'cancelled'].includes(p.status))),
    );
    expect(finals.map((final) => final.status)).toEqual(Array(10).fill('completed'));

    const after = rssMb(client);
    console.log(`server RSS: ${before.toFixed(0)} MB before, ${after.toFixed(0)} MB after 100 asks + 10 tasks`);
    expect(after - before).toBeLessThan(150);
    expect((await client.request('buckley/status', {})).tasks).toEqual([]);
  });

  it('refuses work beyond buckley.limits.maxConcurrent with a clear "busy" error', async () => {
    const client = await start({ initialize: { initializationOptions: { limits: { maxConcurrent: 3 } } } });
    const { CancellationTokenSource } = await import('vscode-jsonrpc');
    const sources = Array.from({ length: 3 }, () => new CancellationTokenSource());
    const hanging = sources.map((source, i) => client.connection.sendRequest('buckley/ask', { question: `HANG ${i}` }, source.token).catch((e) => e));
    await client.waitFor('window/logMessage', (p) => p.message.includes('speaks ACP'));
    await expect(client.request('buckley/ask', { question: 'one more?' })).rejects.toMatchObject({
      code: -32803,
      message: expect.stringContaining('Buckley is busy: 3 asks and tasks are running, the most this editor may have at once (setting buckley.limits.maxConcurrent)'),
    });
    await expect(client.request('buckley/executeTask', { task: 'and a task?' })).rejects.toMatchObject({ code: -32803 });
    for (const source of sources) source.cancel();
    expect(await Promise.all(hanging)).toEqual(Array(3).fill(expect.objectContaining({ code: -32800 })));
    // Places are free again.
    expect((await client.request('buckley/ask', { question: 'now?' })).answer).toContain('You asked: now?');
  });
});
