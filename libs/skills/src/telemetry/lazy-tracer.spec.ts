import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { simulateMissingPeers } from '@zmodu/guard/testing';
import { lazyTracer, SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL, SPAN_STATUS_ERROR } from './lazy-tracer';

describe('lazyTracer: the OpenTelemetry API as an optional peer', () => {
  it("uses the API's own values of SpanKind and SpanStatusCode", () => {
    expect([SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT, SPAN_STATUS_ERROR]).toEqual([SpanKind.INTERNAL, SpanKind.CLIENT, SpanStatusCode.ERROR]);
  });

  it('without @opentelemetry/api installed, every span is a no-op and the work runs as usual', async () => {
    const restore = simulateMissingPeers('@opentelemetry/api');
    try {
      const tracer = lazyTracer('@zmodu/test', '0.0.0');
      const seen: boolean[] = [];
      const value = await tracer.startActiveSpan('work', { kind: SPAN_KIND_INTERNAL, attributes: { a: 1 } }, async (span) => {
        seen.push(span.isRecording());
        span.setAttribute('b', 'x');
        span.setStatus({ code: SPAN_STATUS_ERROR });
        span.end();
        return 42;
      });
      expect(value).toBe(42);
      expect(seen).toEqual([false]);
    } finally {
      restore();
    }
  });

  it('with the API and an SDK registered, spans go to it with the kind, attributes and status given', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    try {
      const tracer = lazyTracer('@zmodu/test', '1.2.3');
      await tracer.startActiveSpan('chat m', { kind: SPAN_KIND_CLIENT, attributes: { 'gen_ai.operation.name': 'chat' } }, async (span) => {
        expect(span.isRecording()).toBe(true);
        span.setStatus({ code: SPAN_STATUS_ERROR, message: 'boom' });
        span.end();
      });
      const [span] = exporter.getFinishedSpans();
      expect(span).toMatchObject({
        name: 'chat m',
        kind: SPAN_KIND_CLIENT,
        attributes: { 'gen_ai.operation.name': 'chat' },
        status: { code: SPAN_STATUS_ERROR, message: 'boom' },
      });
      expect(span.instrumentationScope).toMatchObject({ name: '@zmodu/test', version: '1.2.3' });
    } finally {
      trace.disable();
      await provider.shutdown();
    }
  });
});
