/**
 * The floor for the bridge: a minimal stdio-to-gRPC forwarder with no features — one LSP request
 * becomes one unary SendMessage on the coordinator, its reply the result. Whatever it costs above
 * the direct gRPC call is what any bridge of this shape pays on this machine (one more process,
 * one more stdio hop each way); the bench reports the real bridge against it.
 */
import { createConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver/node.js';
import { CoordinatorClient } from '../src/wire/client.js';
import { sendMessageResponseSchema, sessionSchema } from '../src/wire/contract.js';

const address = process.argv[2];
if (!address) throw new Error('usage: bench-forwarder.mjs HOST:PORT');
const client = new CoordinatorClient({ address, agentId: 'bench-forwarder' });
const session = await client.unary('CreateSession', { agent_id: 'bench-forwarder' }, sessionSchema, { timeoutMs: 5000 });
const metadata = { 'x-buckley-session-id': session.session_id, 'x-buckley-intent': 'ask' };

const connection = createConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
connection.onInitialize(() => ({ capabilities: {} }));
connection.onRequest('buckley/ask', async (params: { question: string }) => {
  const reply = await client.unary('SendMessage', { agent_id: 'bench-forwarder', message: { role: 'user', content: params.question } }, sendMessageResponseSchema, {
    timeoutMs: 5000,
    metadata,
  });
  return { answer: reply.response?.content ?? '' };
});
connection.onExit(() => client.close());
connection.listen();
