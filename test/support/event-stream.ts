import type { IncomingMessage } from 'node:http';
import type { Response } from 'superagent';

/** One Server-Sent Event, its data parsed as JSON. */
export interface ParsedEvent {
  readonly event: string;
  readonly data: unknown;
}

/**
 * Parses a whole text/event-stream body (the WHATWG format: events end at a blank line; `event:` names one, `data:`
 * lines join with newlines; lines starting with `:` are comments). Every data must be JSON.
 */
export function parseEventStream(text: string): ParsedEvent[] {
  const events: ParsedEvent[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) events.push({ event, data: JSON.parse(data.join('\n')) });
  }
  return events;
}

/** A supertest parser that keeps the body as text (supertest does not buffer text/event-stream by itself). */
export function sseBody(response: Response, done: (err: Error | null, body: string) => void): void {
  const res = response as unknown as IncomingMessage; // in Node, superagent hands the parser the raw response
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (text += chunk));
  res.on('end', () => done(null, text));
}

/** A run streamed by POST /agents/:name/runs: its step and delta events, and the text of one model turn. */
export function streamedRun(events: ParsedEvent[]) {
  const steps = events.filter((e) => e.event === 'step').map((e) => e.data as { step: number; toolCall: Record<string, unknown> });
  const deltas = events.filter((e) => e.event === 'delta').map((e) => e.data as { step: number; text: string });
  const textOf = (step: number) =>
    deltas
      .filter((d) => d.step === step)
      .map((d) => d.text)
      .join('');
  return { steps, deltas, textOf };
}

/** One Server-Sent Event with its id (the `id:` field; undefined without one). */
export interface IdentifiedEvent extends ParsedEvent {
  readonly id: string | undefined;
}

/**
 * Reads a live text/event-stream (fetch) until `stop(event)` says so or the stream ends, then cancels it (the client
 * goes away): the events so far, with their ids. `ms` bounds the wait.
 */
export async function readEvents(
  url: string,
  headers: Record<string, string>,
  stop: (event: IdentifiedEvent) => boolean,
  ms = 20_000,
): Promise<{ status: number; events: IdentifiedEvent[] }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no stopping event within ${ms} ms`)), ms);
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: IdentifiedEvent[] = [];
  if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    clearTimeout(timer);
    return { status: res.status, events };
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, '\n');
      let end: number;
      let stopped = false;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        let id: string | undefined;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = val;
          else if (field === 'data') data.push(val);
          else if (field === 'id') id = val;
        }
        if (!data.length) continue;
        const parsed = { event, id, data: JSON.parse(data.join('\n')) as unknown };
        events.push(parsed);
        if (stop(parsed)) stopped = true;
      }
      if (stopped) break;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
    controller.abort();
  }
  return { status: res.status, events };
}
