/**
 * A server stream written by more than one hand (a task's records, the news of its place in the
 * queue) ends for its caller whatever is written as it ends: grpc-js never sends the status of a
 * call written to after its end while an earlier message is still on its way.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, expect, it } from 'vitest';
import { CallOut } from '../../src/coordinator/callOut.js';

const json = { serialize: (value: unknown) => Buffer.from(JSON.stringify(value)), deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown };
const service = {
  Follow: { path: '/probe.Probe/Follow', requestStream: false, responseStream: true, requestSerialize: json.serialize, requestDeserialize: json.deserialize, responseSerialize: json.serialize, responseDeserialize: json.deserialize },
} as unknown as grpc.ServiceDefinition;

let server: grpc.Server | undefined;
afterEach(() => server?.forceShutdown());

/** Serves Follow with `handler`; what a caller gets: its messages and how the call ended. */
async function follow(handler: (call: grpc.ServerWritableStream<unknown, unknown>) => void): Promise<{ messages: string[]; ended: string }> {
  server = new grpc.Server();
  server.addService(service, { Follow: handler });
  const port = await new Promise<number>((resolve, reject) => server!.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  const Client = grpc.makeGenericClientConstructor(service, 'Probe');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const messages: string[] = [];
  const ended = await new Promise<string>((resolve) => {
    const call = (client as unknown as Record<string, (request: unknown, options: grpc.CallOptions) => grpc.ClientReadableStream<{ name: string }>>).Follow!({}, { deadline: Date.now() + 5_000 });
    call.on('data', (message: { name: string }) => messages.push(message.name));
    call.on('error', (error: grpc.ServiceError) => resolve(grpc.status[error.code]));
    call.on('end', () => resolve('OK'));
  });
  client.close();
  return { messages, ended };
}

it('a message written after the end, while the last is still being sent, is dropped: the caller gets the end', async () => {
  const got = await follow((call) => {
    const out = new CallOut(call);
    out.write({ name: 'final', padding: 'x'.repeat(4_000_000) });
    out.end();
    out.write({ name: 'queue news, too late' });
  });
  expect(got).toEqual({ messages: ['final'], ended: 'OK' });
});

it('the first end or error is the one the caller gets', async () => {
  const got = await follow((call) => {
    const out = new CallOut(call);
    out.write({ name: 'started' });
    out.fail(Object.assign(new Error('this coordinator is stopping'), { code: grpc.status.UNAVAILABLE, details: 'this coordinator is stopping', metadata: new grpc.Metadata() }));
    out.end();
    out.write({ name: 'after the error' });
  });
  expect(got).toEqual({ messages: ['started'], ended: 'UNAVAILABLE' });
});
