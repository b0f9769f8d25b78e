/**
 * Traces, end to end: the editor's ask or task (the bridge), the coordinator's task, the agent's
 * turn, its tool calls and the approvals it waits for are spans of one trace, joined by the W3C
 * `traceparent` that goes along — in the gRPC call's metadata, in the agent's ACP requests'
 * `_meta`, in the task's stored spec (the replica that runs it may not be the one that took it).
 *
 * OpenTelemetry is loaded only where `OTEL_EXPORTER_OTLP_ENDPOINT` (or its `_TRACES_` form) is
 * set, and then it exports over OTLP (tracingOtel.ts); otherwise a span is its ids alone — the
 * traceparent still joins the logs of the bridge, the coordinator and the agent — and nothing is
 * loaded, so startup is the same.
 */
import { randomUUID } from 'node:crypto';

export type SpanAttributes = Record<string, string | number | boolean>;

export interface Span {
  /** This span as a W3C traceparent: the parent of what it leads to, in the next process too. */
  readonly traceparent: string;
  set(attributes: SpanAttributes): void;
  /** Ends it; with `error`, as failed (in those words). Only the first call counts. */
  end(error?: string): void;
}

export interface Tracer {
  /** A span named `name`, child of `parent` (a traceparent), else the first of a new trace. */
  start(name: string, parent?: string, attributes?: SpanAttributes): Span;
  /** Sends the spans ended and not yet sent, then stops (within a few seconds). */
  shutdown(): Promise<void>;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Ids only: a new span id in the parent's trace (or a new trace). */
export const idsOnly: Tracer = {
  start(_name, parent) {
    // randomUUID draws from a cached entropy pool; randomBytes is a system call per span.
    const traceId = TRACEPARENT.exec(parent ?? '')?.[1] ?? randomUUID().replaceAll('-', '');
    const spanId = randomUUID().replaceAll('-', '').slice(0, 16);
    return { traceparent: `00-${traceId}-${spanId}-01`, set: () => undefined, end: () => undefined };
  },
  shutdown: async () => undefined,
};

let current: Tracer = idsOnly;
let starting: Promise<void> | undefined;

/** The process's tracer: ids only until (and unless) tracing has started. */
export function tracer(): Tracer {
  return current;
}

/** Whether the environment asks for traces to be exported. */
export function tracesWanted(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true' && env.OTEL_TRACES_EXPORTER !== 'none';
}

/**
 * Starts exporting traces where the environment asks for it (else does nothing, and loads
 * nothing). `warn` hears why it could not (the spans are then ids only).
 */
export function startTracing(service: string, version: string, env: NodeJS.ProcessEnv, warn: (message: string) => void): Promise<void> {
  if (!tracesWanted(env)) return Promise.resolve();
  starting ??= import('./tracingOtel.js')
    .then(({ otlpTracer }) => {
      current = otlpTracer(service, version, env);
    })
    .catch((error: unknown) => warn(`traces are not exported: OpenTelemetry did not start: ${(error as Error).message}`));
  return starting;
}

/** Sends what is left and stops exporting, within `deadlineMs`. */
export async function stopTracing(deadlineMs = 2_000): Promise<void> {
  await starting;
  const tracing = current;
  current = idsOnly;
  starting = undefined;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([tracing.shutdown().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs)))]);
  clearTimeout(timer);
}
