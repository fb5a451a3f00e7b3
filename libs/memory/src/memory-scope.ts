import { MAX_SCOPE_ID_LENGTH, scopeIdProblem } from '@zmodu/core';
import { InvalidMemoryEntryException } from './exceptions/invalid-memory-entry.exception';
import { InvalidMemoryQueryException } from './exceptions/invalid-memory-query.exception';
import { InvalidMemoryScopeException } from './exceptions/invalid-memory-scope.exception';
import { InvalidMemoryOptionsException } from './exceptions/invalid-memory-options.exception';
import { MemoryListQuery, MemoryScope, MemoryStoreOptions, MemoryWriteToken, NewMemoryEntry, RecallCaps } from './memory.types';

/** Longest tenant or user id, entry content, kind and agent name a store accepts. */
export const MAX_SCOPE_PART = MAX_SCOPE_ID_LENGTH;
export const MAX_CONTENT_CHARS = 2_000;
export const MAX_KIND_CHARS = 40;
export const MAX_AGENT_CHARS = 100;

// Content may hold newlines and tabs, never NUL (PostgreSQL text cannot), other C0 or C1 control characters (as goals),
// nor a lone UTF-16 surrogate.
const CONTENT_CONTROL =
  // eslint-disable-next-line no-control-regex -- control characters are what it finds
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function scopeProblem(scope: unknown): string | null {
  if (!scope || typeof scope !== 'object') return 'no scope was given';
  const s = scope as Record<string, unknown>;
  return scopeIdProblem('tenantId', s.tenantId) ?? scopeIdProblem('userId', s.userId);
}

/** The scope as a typed key, or null when it is not a scope (reads of a null scope find nothing). */
export function scopeOf(scope: unknown): MemoryScope | null {
  if (scopeProblem(scope)) return null;
  const s = scope as MemoryScope;
  return { tenantId: s.tenantId, userId: s.userId };
}

/** The scope of a write; throws InvalidMemoryScopeException, saying what is wrong, when there is none. */
export function requireScope(scope: unknown): MemoryScope {
  const problem = scopeProblem(scope);
  if (problem) throw new InvalidMemoryScopeException(problem);
  return scopeOf(scope) as MemoryScope;
}

const KIND = /^[a-z][a-z0-9_.-]*$/;

/** The entry as stored; throws InvalidMemoryEntryException on what cannot be stored. */
export function checkEntry(entry: NewMemoryEntry): NewMemoryEntry {
  if (!entry || typeof entry !== 'object') throw new InvalidMemoryEntryException('no entry was given');
  const { agent, content, kind, expiresAt } = entry;
  if (typeof content !== 'string' || content.trim() === '') throw new InvalidMemoryEntryException('content is empty');
  if (content.length > MAX_CONTENT_CHARS) throw new InvalidMemoryEntryException(`content is longer than ${MAX_CONTENT_CHARS} characters`);
  if (CONTENT_CONTROL.test(content))
    throw new InvalidMemoryEntryException(
      'content holds a NUL, a control character (C0 or C1) or a lone surrogate: send plain text (newlines and tabs are fine)',
    );
  if (typeof kind !== 'string' || kind.length > MAX_KIND_CHARS || !KIND.test(kind))
    throw new InvalidMemoryEntryException(`kind must be a lowercase word of at most ${MAX_KIND_CHARS} characters (e.g. 'preference')`);
  if (typeof agent !== 'string' || agent.trim() === '' || agent.length > MAX_AGENT_CHARS)
    throw new InvalidMemoryEntryException(`agent must be a name of 1 to ${MAX_AGENT_CHARS} characters`);
  if (expiresAt != null && (!(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime())))
    throw new InvalidMemoryEntryException('expiresAt must be a valid Date');
  return { agent, content, kind, expiresAt: expiresAt ?? null };
}

function positiveInt(name: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max)
    throw new InvalidMemoryQueryException(`${name} must be an integer from 1 to ${max}, got ${String(value)}`);
  return value;
}

/** Recall caps, checked. */
export function checkCaps(caps: RecallCaps): RecallCaps {
  return { maxEntries: positiveInt('maxEntries', caps?.maxEntries, 1_000), maxChars: positiveInt('maxChars', caps?.maxChars, 1_000_000) };
}

/** A list page, checked. */
export function checkPage(q: MemoryListQuery): { limit: number; offset: number } {
  const limit = positiveInt('limit', q?.limit, 1_000);
  const offset = q?.offset ?? 0;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0)
    throw new InvalidMemoryQueryException(`offset must be a non-negative integer, got ${String(offset)}`);
  return { limit, offset };
}

/** Keep the ranked entries that fit: at most `maxEntries`, and `maxChars` characters of content in all. */
export function fitCaps<T extends { content: string }>(ranked: readonly T[], caps: RecallCaps): T[] {
  const kept: T[] = [];
  let chars = 0;
  for (const e of ranked) {
    if (kept.length >= caps.maxEntries) break;
    if (chars + e.content.length > caps.maxChars) continue;
    kept.push(e);
    chars += e.content.length;
  }
  return kept;
}

/** The most notes one user keeps, when nothing else is said (MemoryStoreOptions.maxNotesPerUser). */
export const DEFAULT_MAX_NOTES_PER_USER = 200;
/** The largest maxNotesPerUser a store takes. */
export const MAX_NOTES_PER_USER = 100_000;

/** A store's options, checked; throws InvalidMemoryOptionsException saying what to fix. */
export function checkStoreOptions(options: MemoryStoreOptions | undefined): Required<MemoryStoreOptions> {
  const n = options?.maxNotesPerUser ?? DEFAULT_MAX_NOTES_PER_USER;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_NOTES_PER_USER)
    throw new InvalidMemoryOptionsException(`maxNotesPerUser must be an integer from 1 to ${MAX_NOTES_PER_USER}, got ${String(n)}`);
  return { maxNotesPerUser: n };
}

/** A write token must be of the scope written. */
export function checkToken(scope: MemoryScope, token: MemoryWriteToken): void {
  if (!token || token.tenantId !== scope.tenantId || token.userId !== scope.userId || typeof token.epoch !== 'string')
    throw new InvalidMemoryScopeException('the write token is not of this tenant and user (take it from beginWrite of the same scope)');
}
