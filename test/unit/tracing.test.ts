/**
 * Tracing's switch (src/tracing.ts): OpenTelemetry only where the environment names an OTLP
 * endpoint; otherwise spans are ids alone, each in its parent's trace.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { idsOnly, startTracing, stopTracing, tracer, tracesWanted } from '../../src/tracing.js';

afterEach(() => stopTracing());

describe('tracing', () => {
  it('is wanted only where an OTLP endpoint is set, and not disabled', () => {
    expect(tracesWanted({})).toBe(false);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });

  it('stays ids only without an endpoint, and exports with one', async () => {
    await startTracing('test', '0', {}, () => undefined);
    expect(tracer()).toBe(idsOnly);
    await startTracing('test', '0', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }, () => undefined);
    expect(tracer()).not.toBe(idsOnly);
    const parent = tracer().start('parent');
    expect(tracer().start('child', parent.traceparent).traceparent.slice(3, 35)).toBe(parent.traceparent.slice(3, 35));
  });

  it('makes ids in the parent trace, a new span each time', () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const [one, two] = [idsOnly.start('a', parent).traceparent, idsOnly.start('b', parent).traceparent];
    expect(one).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(one).not.toBe(two);
    expect(idsOnly.start('root').traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });
});
