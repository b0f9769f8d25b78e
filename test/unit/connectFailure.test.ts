import { status as grpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { describeConnectFailure, failureOf, plainDetails } from '../../src/bridge/link/failures.js';
import { plainProblem } from '../../src/schema.js';
import { CoordinatorError, MalformedReply, Status } from '../../src/wire/errors.js';

/** What grpc-js 1.14 said when these failures happened (seen in the tests' runs). */
const said = {
  refused: 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1 (127.0.0.1:1). Resolution note: ',
  deadline: 'Deadline exceeded after 5.005s,name resolution: 0.010s,metadata filters: 0.001s,time to current attempt start: 0.001s,Waiting for LB pick',
  unresolved: 'Name resolution failed for target dns:buckley.invalid:50051',
};

describe("a coordinator connection's failure, for people", () => {
  it("names gRPC's status codes as grpc-js does (they are kept apart so that startup does not load it)", () => {
    const ours = Object.entries(Status);
    const theirs = Object.entries(grpcStatus).filter(([name]) => Number.isNaN(Number(name)));
    expect(ours).toEqual(theirs);
    expect(new CoordinatorError('Ask', Status.NOT_FOUND, 'no such plan').message).toBe('Ask: NOT_FOUND: no such plan');
  });

  it("leaves gRPC's internals out", () => {
    expect(plainDetails(said.refused)).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(plainDetails(said.deadline)).toBe('waited 5.0 s');
    expect(plainDetails('')).toBe('no details');
  });

  it('names the setting and what to do, key or fix first in the summary', () => {
    const refused = describeConnectFailure('remote', '127.0.0.1:1', new CoordinatorError('GetServerCapabilities', Status.UNAVAILABLE, said.refused), false);
    expect(refused.summary).toBe('nothing listens at 127.0.0.1:1: start the coordinator');
    expect(refused.message).toMatch(/^nothing listens at 127\.0\.0\.1:1 \(from buckley\.coordinator\.address or BUCKLEY_COORDINATOR\): start it/);

    const slow = describeConnectFailure('remote', '127.0.0.1:7', new CoordinatorError('GetServerCapabilities', Status.DEADLINE_EXCEEDED, said.deadline), false);
    expect(slow.message).toContain('did not answer in time (waited 5.0 s)');
    expect(slow.message).not.toMatch(/LB pick|name resolution:/);

    const unresolved = describeConnectFailure('remote', 'buckley.invalid:50051', new CoordinatorError('GetServerCapabilities', Status.UNAVAILABLE, said.unresolved), true);
    expect(unresolved.summary).toBe('buckley.invalid does not resolve (buckley.coordinator.address)');
    expect(unresolved.message).not.toContain('TLS');
  });
});

describe('a reply of the coordinator not as the wire says, for people', () => {
  it('says which coordinator sent what, what is wrong where in plain words, and what to check', () => {
    const identity = { agentId: 'me', source: 'instance' as const };
    const failure = failureOf(new MalformedReply('StreamTask', 'a message of its stream', 'file_request.request_id: empty'), { address: '10.0.0.5:50051', identity, call: 'stream' });
    expect(failure).toEqual({
      message: 'the coordinator at 10.0.0.5:50051 sent a message of its stream of StreamTask that buckley-lsp cannot read (file_request.request_id: empty): it speaks buckley.acp.v1 otherwise than this buckley-lsp — update whichever is older, or check that a Buckley or buckley-lsp coordinator listens there',
      summary: '10.0.0.5:50051 sent what buckley-lsp cannot read (see log)',
    });
    // zod's "too small" for a string that must hold something reads as what it is.
    expect(plainProblem('Too small: expected string to have >=1 characters')).toBe('empty');
  });
});
