import { tryLoadOptionalPeer } from '@zmodu/core';

/** A span attribute's value (the OpenTelemetry API's, without arrays: we set none). */
export type TraceAttributeValue = string | number | boolean;
export type TraceAttributes = Record<string, TraceAttributeValue>;

/** What of the OpenTelemetry API's Span the tracing of @zmodu/skills and @zmodu/agent uses. */
export interface TraceSpan {
  setAttribute(key: string, value: TraceAttributeValue): unknown;
  setAttributes(attributes: TraceAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  isRecording(): boolean;
  end(): void;
}

/** The OpenTelemetry API's SpanKind and SpanStatusCode values that we use (fixed by the API's 1.x line). */
export const SPAN_KIND_INTERNAL = 0;
export const SPAN_KIND_CLIENT = 2;
export const SPAN_STATUS_ERROR = 2;

export interface LazyTracer {
  startActiveSpan<T>(name: string, options: { kind: number; attributes: TraceAttributes }, fn: (span: TraceSpan) => T): T;
}

interface OpenTelemetryApi {
  trace: { getTracer(name: string, version?: string): LazyTracer };
}

const NO_SPAN: TraceSpan = {
  setAttribute: () => undefined,
  setAttributes: () => undefined,
  setStatus: () => undefined,
  isRecording: () => false,
  end: () => undefined,
};
const NO_TRACER: LazyTracer = { startActiveSpan: (_name, _options, fn) => fn(NO_SPAN) };

/**
 * A tracer of the OpenTelemetry API, which is an optional peer dependency: an application that traces has it (its SDK
 * depends on it, and one copy of it is what makes the SDK see our spans); one that does not, does not install it, and
 * every span is a no-op. The API is looked for at the first span, not at import; once found (or not), that holds for
 * the life of the tracer. With the API and no SDK registered, it is the API's own no-op (its proxy tracer picks up an
 * SDK registered later).
 */
export function lazyTracer(name: string, version: string): LazyTracer {
  let tracer: LazyTracer | undefined;
  return {
    startActiveSpan(spanName, options, fn) {
      tracer ??= openTelemetry()?.trace.getTracer(name, version) ?? NO_TRACER;
      return tracer.startActiveSpan(spanName, options, fn);
    },
  };
}

function openTelemetry(): OpenTelemetryApi | undefined {
  return tryLoadOptionalPeer<OpenTelemetryApi>(
    '@opentelemetry/api',
    'OpenTelemetry tracing',
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    () => require('@opentelemetry/api') as OpenTelemetryApi,
    { install: '@opentelemetry/api@^1.9.0' },
  );
}
