/**
 * gRPC's status codes, the numbers its spec fixes. Named here, not imported from grpc-js, so that
 * code which only reads a failure (the flows, at startup) does not load all of gRPC; a unit test
 * holds them equal to grpc-js's.
 */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type StatusCode = (typeof Status)[keyof typeof Status];

const statusName = (code: number) => Object.keys(Status).find((name) => Status[name as keyof typeof Status] === code);

/** Every failed coordinator call becomes this: which method, which gRPC code, what it said. */
export class CoordinatorError extends Error {
  override readonly name = 'CoordinatorError';
  constructor(
    readonly method: string,
    readonly code: number,
    readonly details: string,
    /** What failed behind the coordinator, which answered (our BEHIND_TRAILER): its agent or model, a team's store. */
    readonly behind?: 'agent' | 'store',
  ) {
    super(`${method}: ${statusName(code) ?? code}: ${details}`);
  }

  get cancelled(): boolean {
    return this.code === Status.CANCELLED;
  }
  get deadlineExceeded(): boolean {
    return this.code === Status.DEADLINE_EXCEEDED;
  }
  get unavailable(): boolean {
    return this.code === Status.UNAVAILABLE;
  }
  /** The coordinator itself went away (not what is behind it): a client connects anew. */
  get coordinatorGone(): boolean {
    return this.unavailable && this.behind === undefined;
  }
}

/** A reply or stream message of the coordinator that is not as buckley.acp.v1 says (zod found why). */
export class MalformedReply extends CoordinatorError {
  constructor(
    method: string,
    /** "a reply", "an event": what came. */
    readonly what: string,
    /** What is wrong where, in one line ("file_request.request_id: empty"). */
    readonly problems: string,
  ) {
    super(method, Status.INTERNAL, `malformed ${what === 'a reply' ? 'reply' : 'stream message'}: ${problems}`);
  }
}
