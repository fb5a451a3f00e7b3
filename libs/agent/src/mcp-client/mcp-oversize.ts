import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/client';

/**
 * Messages of an MCP server past `maxMessageBytes`, on our side of every transport (not the SDK's read buffers, whose
 * overflow closed a stdio connection for good): a message too large is dropped as it streams in, never held whole,
 * and the request it answers gets a JSON-RPC error of ours in its place, so the call fails alone
 * (`mcp_result_too_large`) and the connection stays up.
 */

/** The JSON-RPC error code of a message we dropped for its size. */
export const OVERSIZE_CODE = -32099;
/** A random mark in the error's data: a server cannot pass an error of its own for one of ours. */
const OVERSIZE_MARK = randomUUID();

/** The error response that stands for a dropped message answering `id`. */
export function oversizeResponse(id: RequestId, maxMessageBytes: number): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: OVERSIZE_CODE,
      message: `the answer was larger than maxMessageBytes (${maxMessageBytes} bytes) and was dropped`,
      data: { zmoduOversize: OVERSIZE_MARK, maxMessageBytes },
    },
  } as JSONRPCMessage;
}

/** Whether an error's data is the mark of `oversizeResponse` (not something a server sent). */
export function isOversize(data: unknown): boolean {
  return (
    data !== null &&
    typeof data === 'object' &&
    Object.hasOwn(data, 'zmoduOversize') &&
    (data as Record<string, unknown>).zmoduOversize === OVERSIZE_MARK
  );
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MAX_KEY_BYTES = 16;
const MAX_ID_BYTES = 256;

/**
 * Finds the top-level `"id"` of a JSON object as its bytes stream by, keeping only a few bytes: the id of a message
 * too large to hold. A string key is decoded (`"\u0069d"` is `id`); of two ids the last counts, as JSON.parse does.
 */
export class JsonRpcIdScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private key: number[] | null = null;
  private keyDone: string | null = null;
  private value: number[] | null = null;
  private found: RequestId | undefined;

  /** The id found so far: a string or a number, or undefined. */
  get id(): RequestId | undefined {
    return this.found;
  }

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) this.byte(bytes[i]);
  }

  private byte(b: number): void {
    if (this.value && !(this.depth === 1 && !this.inString && (b === 0x2c || b === 0x7d))) {
      if (this.value.length < MAX_ID_BYTES) this.value.push(b);
      else this.value = [];
    }
    if (this.inString) {
      if (this.key && this.key.length <= MAX_KEY_BYTES && !(b === QUOTE && !this.escaped)) this.key.push(b);
      if (this.escaped) this.escaped = false;
      else if (b === BACKSLASH) this.escaped = true;
      else if (b === QUOTE) {
        this.inString = false;
        if (this.key) {
          this.keyDone = this.key.length <= MAX_KEY_BYTES ? decodeKey(this.key) : null;
          this.key = null;
        }
      }
      return;
    }
    switch (b) {
      case QUOTE:
        this.inString = true;
        if (this.depth === 1 && this.expectKey) {
          this.key = [];
          this.expectKey = false;
        }
        return;
      case 0x7b: // {
      case 0x5b: // [
        this.depth++;
        if (this.depth === 1) this.expectKey = b === 0x7b;
        return;
      case 0x7d: // }
      case 0x5d: // ]
        if (this.depth === 1) this.endValue();
        this.depth--;
        return;
      case 0x3a: // :
        if (this.depth === 1 && this.keyDone !== null) {
          if (this.keyDone === 'id') this.value = [];
          this.keyDone = null;
        }
        return;
      case 0x2c: // ,
        if (this.depth === 1) {
          this.endValue();
          this.expectKey = true;
        }
        return;
      default:
        return;
    }
  }

  private endValue(): void {
    if (!this.value) return;
    const raw = Buffer.from(this.value).toString('utf8').trim();
    this.value = null;
    try {
      const id: unknown = JSON.parse(raw);
      if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) this.found = id;
    } catch {
      // not an id we could have sent
    }
  }
}

function decodeKey(bytes: number[]): string | null {
  try {
    return JSON.parse(`"${Buffer.from(bytes).toString('utf8')}"`) as string;
  } catch {
    return null;
  }
}

/** One framed piece of a stream: a whole unit (a line, an event) within the cap, or the id of one that was not. */
export type Framed = { readonly unit: Buffer } | { readonly oversize: RequestId | undefined };

/**
 * Splits a byte stream into newline-terminated lines of at most `max` bytes (a trailing CR dropped). A longer line is
 * not kept: its bytes go through a JsonRpcIdScanner and it comes out as `{ oversize: id }` when its newline arrives.
 */
export class LineFramer {
  private chunks: Buffer[] = [];
  private size = 0;
  private scanner: JsonRpcIdScanner | null = null;

  constructor(private readonly max: number) {}

  push(chunk: Buffer, out: Framed[] = []): Framed[] {
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const part = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      this.take(part);
      if (nl === -1) break;
      out.push(this.end());
      start = nl + 1;
    }
    return out;
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.scanner) return this.scanner.feed(part);
    if (this.size + part.length <= this.max) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    this.scanner = new JsonRpcIdScanner();
    for (const held of this.chunks) this.scanner.feed(held);
    this.scanner.feed(part);
    this.chunks = [];
    this.size = 0;
  }

  private end(): Framed {
    if (this.scanner) {
      const id = this.scanner.id;
      this.scanner = null;
      return { oversize: id };
    }
    let unit = Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    if (unit.length && unit[unit.length - 1] === 0x0d) unit = unit.subarray(0, unit.length - 1);
    return { unit };
  }
}

/**
 * A Server-Sent Events stream with each event capped at `max` bytes; an event within the cap passes byte for byte.
 * On the stream of a POST (`ids`: the requests it carried), an event past the cap ends the stream at once: each of
 * those requests gets `oversizeResponse` and the rest of the body is not read (an event that never ends fails the
 * call, not only its timeout). On a stream of no request (the GET stream) the event is dropped as it streams and
 * replaced, when it ends, by `oversizeResponse` for the id in its data (nothing when it had none).
 */
export function cappedEventStream(
  body: ReadableStream<Uint8Array>,
  max: number,
  ids: readonly RequestId[] = [],
): ReadableStream<Uint8Array> {
  const capper = new EventCapper(max, ids.length > 0);
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          const rest = capper.finish();
          if (rest.length) controller.enqueue(rest);
          controller.close();
          return;
        }
        const out = capper.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
        if (capper.cut) {
          await reader.cancel().catch(() => undefined);
          const answers = ids.map((id) => `event: message\ndata: ${JSON.stringify(oversizeResponse(id, max))}\n\n`).join('');
          controller.enqueue(Buffer.concat([out, Buffer.from(answers)]));
          controller.close();
          return;
        }
        if (out.length) return controller.enqueue(out);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** @internal The state of cappedEventStream: the event being read, and the line being read within it. */
export class EventCapper {
  private held: Buffer[] = [];
  private heldSize = 0;
  private scanner: JsonRpcIdScanner | null = null;
  // The line being read: its length, whether it ends in CR, and (for an oversized event) its field.
  private lineLength = 0;
  private lastCR = false;
  private prefix: number[] = [];
  private field: 'data' | 'other' | undefined;
  private skipSpace = false;
  /** Set when an event outgrew the cap and `cutOnOverflow`: the caller ends the stream. */
  cut = false;

  constructor(
    private readonly max: number,
    private readonly cutOnOverflow = false,
  ) {}

  push(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(0x0a, pos);
      const end = nl === -1 ? chunk.length : nl + 1;
      const piece = chunk.subarray(pos, end);
      pos = end;
      if (!this.scanner) {
        if (this.heldSize + piece.length > this.max && this.cutOnOverflow) {
          this.cut = true;
          return Buffer.concat(out);
        }
        if (this.heldSize + piece.length > this.max) this.overflow();
        else {
          this.held.push(piece);
          this.heldSize += piece.length;
        }
      }
      const ended = nl !== -1;
      if (this.line(ended ? piece.subarray(0, piece.length - 1) : piece, ended)) out.push(this.endEvent());
    }
    return Buffer.concat(out);
  }

  /** What is left when the stream ends: an unfinished event within the cap as it came (the parser drops it). */
  finish(): Buffer {
    return this.scanner ? Buffer.alloc(0) : Buffer.concat(this.held);
  }

  /** The event outgrew the cap: its bytes so far go through the scanner, from the event's first line. */
  private overflow(): void {
    this.scanner = new JsonRpcIdScanner();
    const replay = Buffer.concat(this.held);
    this.held = [];
    this.heldSize = 0;
    this.resetLine();
    let pos = 0;
    while (pos < replay.length) {
      const nl = replay.indexOf(0x0a, pos);
      const end = nl === -1 ? replay.length : nl + 1;
      this.line(replay.subarray(pos, nl === -1 ? end : nl), nl !== -1);
      pos = end;
    }
  }

  /** Take one part of a line; true when it ends an event (a blank line). */
  private line(part: Buffer, ended: boolean): boolean {
    if (part.length) {
      this.lineLength += part.length;
      this.lastCR = part[part.length - 1] === 0x0d;
    }
    if (this.scanner) this.scanData(part, ended);
    if (!ended) return false;
    const blank = this.lineLength === 0 || (this.lineLength === 1 && this.lastCR);
    this.resetLine();
    return blank;
  }

  /** The bytes of a `data:` field (after one optional space) reach the scanner, a newline between two lines. */
  private scanData(part: Buffer, ended: boolean): void {
    let rest = part;
    if (this.field === undefined) {
      const need = 5 - this.prefix.length;
      for (const b of rest.subarray(0, need)) this.prefix.push(b);
      rest = rest.subarray(need);
      if (this.prefix.length === 5) {
        this.field = Buffer.from(this.prefix).toString('latin1') === 'data:' ? 'data' : 'other';
        this.skipSpace = true;
      } else if (ended) this.field = 'other';
    }
    if (this.field !== 'data') return;
    if (this.skipSpace && rest.length) {
      if (rest[0] === 0x20) rest = rest.subarray(1);
      this.skipSpace = false;
    }
    if (rest.length) this.scanner!.feed(rest);
    if (ended) this.scanner!.feed(NEWLINE);
  }

  private endEvent(): Buffer {
    const scanner = this.scanner;
    const event = Buffer.concat(this.held);
    this.held = [];
    this.heldSize = 0;
    this.scanner = null;
    if (!scanner) return event;
    const id = scanner.id;
    return id === undefined ? Buffer.alloc(0) : Buffer.from(`event: message\ndata: ${JSON.stringify(oversizeResponse(id, this.max))}\n\n`);
  }

  private resetLine(): void {
    this.lineLength = 0;
    this.lastCR = false;
    this.prefix = [];
    this.field = undefined;
    this.skipSpace = false;
  }
}

const NEWLINE = Buffer.from('\n');
