import { status as Status } from '@grpc/grpc-js';

/** Every failed coordinator call becomes this: which method, which gRPC code, what it said. */
export class CoordinatorError extends Error {
  override readonly name = 'CoordinatorError';
  constructor(
    readonly method: string,
    readonly code: Status,
    readonly details: string,
  ) {
    super(`${method}: ${Status[code] ?? code}: ${details}`);
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
}

export { Status };
