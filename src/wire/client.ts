/**
 * A small promise-based client of buckley.acp.v1.AgentCommunication. Every call takes a
 * deadline and an AbortSignal that cancels it; every failure becomes a CoordinatorError;
 * replies are validated with zod before anyone trusts them.
 */
import * as grpc from '@grpc/grpc-js';
import * as z from '../schema.js';
import { CoordinatorError, MalformedReply, Status } from './errors.js';
import { agentCommunicationService } from './protos.js';
import { AGENT_HEADER, AUTHORIZATION_HEADER, BEHIND_TRAILER } from './contract.js';
import { STREAMS, UNARY, type ReplyOf, type RequestOf } from './methods.js';

export interface CallOptions {
  /** Milliseconds from now; the call fails with DEADLINE_EXCEEDED after it. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Extra request metadata (e.g. `x-buckley-session-id`). */
  metadata?: Record<string, string>;
}

export interface ClientOptions {
  address: string;
  agentId: string;
  /** Sent as `authorization: Bearer <secret>` (the embedded coordinator serves only its bridge). */
  secret?: string;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

type UnaryMethod = (
  request: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: unknown) => void,
) => grpc.ClientUnaryCall;
type StreamMethod = (request: unknown, metadata: grpc.Metadata, options: grpc.CallOptions) => grpc.ClientReadableStream<unknown>;

/** The wire's calls with one reply, typed by methods.ts: `client.call.CreateSession(request, options)`. */
export type UnaryCalls = { [M in keyof typeof UNARY]: (request: RequestOf<(typeof UNARY)[M]>, options: CallOptions) => Promise<ReplyOf<(typeof UNARY)[M]>> };
/** The wire's streaming calls, typed: `client.open.StreamTask(request, options)`. */
export type StreamCalls = { [M in keyof typeof STREAMS]: (request: RequestOf<(typeof STREAMS)[M]>, options: CallOptions) => AsyncGenerator<ReplyOf<(typeof STREAMS)[M]>> };

export class CoordinatorClient {
  private readonly client: grpc.Client;
  /** Every call with one reply, typed (see methods.ts). */
  readonly call: UnaryCalls;
  /** Every streaming call, typed. */
  readonly open: StreamCalls;

  constructor(private readonly options: ClientOptions) {
    const Service = agentCommunicationService();
    this.client = new Service(options.address, options.credentials ?? grpc.credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      ...options.channelOptions,
    });
    this.call = Object.fromEntries(Object.entries(UNARY).map(([name, method]) => [name, (request: unknown, call: CallOptions) => this.unary<unknown>(name, request, method.reply, call)])) as UnaryCalls;
    this.open = Object.fromEntries(Object.entries(STREAMS).map(([name, method]) => [name, (request: unknown, call: CallOptions) => this.stream<unknown>(name, request, method.reply as z.core.$ZodType<unknown>, call)])) as StreamCalls;
  }

  get address(): string {
    return this.options.address;
  }

  close(): void {
    this.client.close();
  }

  /**
   * Calls `listener` each time an established connection breaks (the coordinator stopped or
   * restarted, the network went away): what really happens, whatever the coordinator answers
   * afterwards. Ends when the client is closed.
   */
  onDisconnect(listener: () => void): void {
    const channel = this.client.getChannel();
    const watch = (from: grpc.connectivityState) => {
      // Re-armed every hour: a deadline is required, and the wait must not be the only thing left.
      channel.watchConnectivityState(from, Date.now() + 3_600_000, () => {
        const now = channel.getConnectivityState(false);
        if (now === grpc.connectivityState.SHUTDOWN) return;
        if (from === grpc.connectivityState.READY && now !== grpc.connectivityState.READY) listener();
        watch(now);
      });
    };
    watch(channel.getConnectivityState(false));
  }

  /** Buckley takes the agent identity of a loopback plaintext peer from this header. */
  private metadata(extra?: Record<string, string>): grpc.Metadata {
    const metadata = new grpc.Metadata();
    metadata.set(AGENT_HEADER, this.options.agentId);
    if (this.options.secret) metadata.set(AUTHORIZATION_HEADER, `Bearer ${this.options.secret}`);
    for (const [key, value] of Object.entries(extra ?? {})) metadata.set(key, value);
    return metadata;
  }

  /**
   * Any method by its name, with any request: what `call` is made of, and how tests probe a
   * coordinator with what a typed caller cannot send (a method it lacks, a malformed request).
   */
  unary<T>(method: string, request: unknown, schema: z.core.$ZodType<T>, options: CallOptions): Promise<T> {
    const fn = (this.client as unknown as Record<string, UnaryMethod>)[method];
    if (!fn) return Promise.reject(new CoordinatorError(method, Status.UNIMPLEMENTED, 'no such method in buckley.acp.v1'));
    if (options.signal?.aborted) return Promise.reject(new CoordinatorError(method, Status.CANCELLED, 'cancelled before it started'));
    return new Promise<T>((resolve, reject) => {
      const call = fn.call(
        this.client,
        request,
        this.metadata(options.metadata),
        { deadline: Date.now() + options.timeoutMs },
        (error, response) => {
          options.signal?.removeEventListener('abort', onAbort);
          if (error) return reject(toCoordinatorError(method, error));
          const parsed = z.safeParse(schema, response ?? {});
          if (!parsed.success) {
            return reject(new MalformedReply(method, 'a reply', z.problems(parsed.error)));
          }
          resolve(parsed.data);
        },
      );
      const onAbort = () => call.cancel();
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * A server stream by its name, as an async iterable of validated messages (what `open` is made of). Breaking out of the loop or
   * aborting the signal cancels the call.
   */
  async *stream<T>(method: string, request: unknown, schema: z.core.$ZodType<T>, options: CallOptions): AsyncGenerator<T> {
    const fn = (this.client as unknown as Record<string, StreamMethod>)[method];
    if (!fn) throw new CoordinatorError(method, Status.UNIMPLEMENTED, 'no such method in buckley.acp.v1');
    if (options.signal?.aborted) throw new CoordinatorError(method, Status.CANCELLED, 'cancelled before it started');
    const call = fn.call(this.client, request, this.metadata(options.metadata), { deadline: Date.now() + options.timeoutMs });
    const onAbort = () => call.cancel();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const message of call) {
        const parsed = z.safeParse(schema, message);
        if (!parsed.success) {
          throw new MalformedReply(method, 'a message of its stream', z.problems(parsed.error));
        }
        yield parsed.data;
      }
    } catch (error) {
      if (error instanceof CoordinatorError) throw error;
      throw toCoordinatorError(method, error);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      call.cancel();
    }
  }
}

function toCoordinatorError(method: string, error: unknown): CoordinatorError {
  const serviceError = error as Partial<grpc.ServiceError>;
  if (typeof serviceError.code === 'number') {
    const behind = serviceError.metadata?.get(BEHIND_TRAILER)[0]?.toString();
    return new CoordinatorError(method, serviceError.code, serviceError.details || serviceError.message || 'no details', behind === 'agent' || behind === 'store' ? behind : undefined);
  }
  return new CoordinatorError(method, Status.UNKNOWN, error instanceof Error ? error.message : String(error));
}
