import { status as grpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { describeConnectFailure, plainDetails } from '../../src/bridge/link/failures.js';
import { CoordinatorError, Status } from '../../src/wire/errors.js';

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
