/**
 * Spans exported over OTLP/HTTP by the OpenTelemetry SDK: loaded by tracing.ts only where the
 * environment names an endpoint. The exporter reads the standard variables itself
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `…_HEADERS`, `…_TIMEOUT`); the batch processor reads
 * `OTEL_BSP_*`; `OTEL_SERVICE_NAME` names the service. Parents are given explicitly, as
 * traceparents: no context is carried across awaits behind our back.
 */
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Span, SpanAttributes, Tracer } from './tracing.js';

export function otlpTracer(service: string, version: string, env: NodeJS.ProcessEnv): Tracer {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || service, 'service.version': version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const otel = provider.getTracer('buckley-lsp', version);
  const propagator = new W3CTraceContextPropagator();
  return {
    start(name: string, parent?: string, attributes?: SpanAttributes): Span {
      const parentContext = parent ? propagator.extract(ROOT_CONTEXT, { traceparent: parent }, defaultTextMapGetter) : ROOT_CONTEXT;
      const span = otel.startSpan(name, attributes ? { attributes } : {}, parentContext);
      const carrier: Record<string, string> = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
      let ended = false;
      return {
        traceparent: carrier.traceparent!,
        set: (more) => span.setAttributes(more),
        end: (error) => {
          if (ended) return;
          ended = true;
          if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
          span.end();
        },
      };
    },
    shutdown: () => provider.shutdown(),
  };
}
