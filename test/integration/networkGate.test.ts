/**
 * The agent's network gate (buckley-lsp's proxy for a sandbox) against clients that go away at the
 * worst moment: a connection closed while its CONNECT is being judged, or while its tunnel is
 * being opened, ends that connection alone — the process that serves the gate (a coordinator, an
 * editor's server) lives on, and the next connection is served. An error on one socket with no
 * listener killed the process ("write EPIPE", seen in a full run).
 */
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NetworkGate } from '../../src/coordinator/agents/sandboxNetwork.js';
import { RootLogger } from '../../src/logger.js';

const gates: NetworkGate[] = [];
afterEach(async () => {
  await Promise.all(gates.splice(0).map((gate) => gate.close()));
});

/** One CONNECT through the gate's proxy socket: its answer's status line, or what ended it. */
function connectThrough(gate: NetworkGate, authority: string, leave = false): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(join(gate.plan.socketDir, 'proxy.sock'));
    socket.on('error', (error) => resolve(`error: ${error.message}`));
    socket.on('connect', () => {
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`);
      // Gone before the gate answers: its answer is written to a closed socket.
      if (leave) {
        socket.destroy();
        resolve('left');
      }
    });
    socket.once('data', (chunk) => {
      resolve(chunk.toString('latin1').split('\r\n')[0]!);
      socket.destroy();
    });
  });
}

describe("the agent's network gate", () => {
  it('outlives clients that leave while their CONNECT is judged or their tunnel opened, and serves the next', async () => {
    // A service it allows, which answers nothing: the tunnel is opened, then left.
    const service = createServer((socket) => socket.on('error', () => {}));
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    const port = (service.address() as { port: number }).port;
    const logger = new RootLogger('error', () => undefined);
    const gate = await NetworkGate.open([{ host: '127.0.0.1', port }], logger, 'socat', {});
    gates.push(gate);

    const leaving = [];
    for (let i = 0; i < 40; i++) {
      leaving.push(connectThrough(gate, 'refused.example.invalid:443', true));
      leaving.push(connectThrough(gate, `127.0.0.1:${port}`, true));
    }
    expect(new Set(await Promise.all(leaving))).toEqual(new Set(['left']));
    // Still serving: a refusal in words, and a tunnel.
    expect(await connectThrough(gate, 'refused.example.invalid:443')).toBe('HTTP/1.1 403 Forbidden');
    expect(await connectThrough(gate, `127.0.0.1:${port}`)).toBe('HTTP/1.1 200 Connection Established');
    service.close();
  });
});
