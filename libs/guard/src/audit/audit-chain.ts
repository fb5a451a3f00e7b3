import { createHash } from 'node:crypto';
import { AuditEntry } from './audit-entry';
import { canonicalJson } from '@zmodu/core';

/** The `prevHash` of the first entry of a tenant's chain. */
export const AUDIT_CHAIN_GENESIS = '0'.repeat(64);

/** What the chain of one tenant says: intact (with its length and head), or the first entry that is not what was written. */
export type AuditChainVerdict =
  | { readonly ok: true; readonly entries: number; readonly head: string }
  | {
      readonly ok: false;
      /** The sequence number of the first bad entry (for `deleted`: the first missing number). */
      readonly firstBadSequence: number;
      /**
       * `altered`: the entry's fields no longer give its hash; `deleted`: an entry is missing (a gap in the sequence, or an
       * entry links to a hash no entry has); `inserted`: an entry the chain does not go through (the next entry links past
       * it, a sequence number used twice, or a row without a chain written after the audit was chained); `re-linked`: the entry
       * links to an existing entry other than the one before it.
       */
      readonly problem: 'altered' | 'deleted' | 'inserted' | 're-linked';
    };

/** An entry as the chain holds it: its fields, with the timestamp as the database stores it (microseconds). */
export interface AuditChainLink {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
  readonly entry: AuditEntry;
  /** `at` at the precision of the store: `YYYY-MM-DDTHH:MM:SS.ffffffZ` (see auditTimestamp). */
  readonly at: string;
  /** The arguments and result as stored (their audit text): hashed as they are. Absent: derived from the entry. */
  readonly payload?: AuditPayloadTexts;
}

/** A Date as hashed: ISO 8601 in UTC with six fraction digits (PostgreSQL timestamptz keeps microseconds; a Date has milliseconds). */
export function auditTimestamp(at: Date): string {
  return at.toISOString().replace(/Z$/, '000Z');
}

/** The longest arguments or result an audit entry keeps, in characters of JSON text. */
export const AUDIT_PAYLOAD_MAX_CHARS = 16_384;

/**
 * The arguments or result of a call as the audit keeps them: their JSON text (JSON.stringify: dates as ISO text, toJSON
 * applied), or, when longer than AUDIT_PAYLOAD_MAX_CHARS, `{"chars":…,"sha256":…,"truncated":true}` (the digest of the
 * full text, so a copy kept elsewhere can be matched). Undefined when there is nothing to keep. The text is stored as
 * it is and hashed as it is stored: the verifier never derives it again from a value read back.
 */
export function auditPayloadText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  let plain: string | undefined;
  try {
    plain = JSON.stringify(value);
  } catch {
    return canonicalJson({ unserializable: true });
  }
  if (plain === undefined) return undefined;
  if (plain.length > AUDIT_PAYLOAD_MAX_CHARS)
    return canonicalJson({ truncated: true, chars: plain.length, sha256: createHash('sha256').update(plain, 'utf8').digest('hex') });
  return plain;
}

/**
 * What an audit entry keeps of a payload whose content must not be kept (`audit: 'digest'` of a skill):
 * `{"chars":…,"digest":true,"sha256":…}` of its JSON text. Undefined for undefined.
 */
export function auditDigest(value: unknown): { readonly chars: number; readonly digest: true; readonly sha256: string } | undefined {
  let text: string | undefined;
  try {
    text = value === undefined ? undefined : JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return undefined;
  return { chars: text.length, digest: true, sha256: createHash('sha256').update(text, 'utf8').digest('hex') };
}

/** The arguments and result of an entry as audit text (see auditPayloadText). */
export interface AuditPayloadTexts {
  readonly args: string | undefined;
  readonly result: string | undefined;
}

export function auditPayloadTexts(entry: AuditEntry): AuditPayloadTexts {
  return { args: auditPayloadText(entry.args), result: auditPayloadText(entry.result) };
}

/**
 * The hash of one entry: SHA-256 (hex) of the canonical JSON of every stored field, its sequence number and the previous
 * hash. The arguments and result are hashed as their audit text (auditPayloadText; pass `payload` when you have it); an
 * entry without them hashes as entries did before they were kept.
 */
export function auditEntryHash(seq: number, prevHash: string, entry: AuditEntry, at: string, payload = auditPayloadTexts(entry)): string {
  // The members in the order canonicalJson sorts them (byte-equal to canonicalJson of the object; audit-chain.spec.ts checks).
  const members: Array<[string, unknown]> = [
    ['action', entry.action],
    ['agent', entry.agent],
    ['approvers', entry.approvers ? [...entry.approvers] : null],
    ['args', payload.args],
    ['at', at],
    ['cause', entry.cause],
    ['decision', entry.decision],
    ['durationMs', Math.round(entry.durationMs)],
    ['outcome', entry.outcome],
    ['prevHash', prevHash],
    ['proposalId', entry.proposalId ?? null],
    ['result', payload.result],
    ['runId', entry.runId],
    ['seq', seq],
    ['skill', entry.skill],
    ['tenantId', entry.tenantId],
    ['tokens', Math.round(entry.tokens)],
    ['userId', entry.userId],
  ];
  let text = '';
  for (const [key, value] of members) if (value !== undefined) text += `${text === '' ? '{' : ','}"${key}":${canonicalJson(value)}`;
  return createHash('sha256').update(`${text}}`, 'utf8').digest('hex');
}

/** An entry's place in its tenant's chain, and its payload texts as hashed (to be stored as they are). */
export interface AuditChainPlace extends AuditPayloadTexts {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
}

/** Chain `entries` (all of one tenant, in order) after the head `{ seq, hash }` of that tenant's chain. */
export function chainEntries(head: { seq: number; hash: string }, entries: readonly AuditEntry[]): AuditChainPlace[] {
  let { seq, hash } = head;
  return entries.map((e) => {
    const prevHash = hash;
    const payload = auditPayloadTexts(e);
    seq += 1;
    hash = auditEntryHash(seq, prevHash, e, auditTimestamp(e.at), payload);
    return { seq, prevHash, hash, ...payload };
  });
}

/**
 * Walk one tenant's chain, in sequence order, and report the first entry that is not as written.
 * `links` yields the chained entries ordered by sequence number; `hashExists` says whether some entry of the tenant has
 * that hash (asked once, at the first broken link); `strayAt` is the position of the first row without a chain written
 * after the audit was chained (the sequence number it sits before), if any.
 */
export async function verifyChainLinks(
  links: AsyncIterable<AuditChainLink>,
  hashExists: (hash: string) => Promise<boolean>,
  strayAt: number | null,
): Promise<AuditChainVerdict> {
  const bad = (firstBadSequence: number, problem: 'altered' | 'deleted' | 'inserted' | 're-linked'): AuditChainVerdict =>
    strayAt !== null && strayAt <= firstBadSequence
      ? { ok: false, firstBadSequence: strayAt, problem: 'inserted' }
      : { ok: false, firstBadSequence, problem };
  let expected = 1;
  let prev = AUDIT_CHAIN_GENESIS;
  let pending: AuditChainLink | null = null;
  // Each link is judged with the one after it in view (to tell an inserted entry, which the chain goes around, from an altered one).
  const judge = async (row: AuditChainLink, next: AuditChainLink | null): Promise<AuditChainVerdict | null> => {
    if (row.seq < expected) return bad(row.seq, 'inserted');
    if (row.seq > expected) return bad(expected, 'deleted');
    const intact = auditEntryHash(row.seq, row.prevHash, row.entry, row.at, row.payload) === row.hash;
    const linked = row.prevHash === prev;
    if (intact && linked) {
      expected += 1;
      prev = row.hash;
      return null;
    }
    if (next !== null && next.prevHash === prev) return bad(row.seq, 'inserted');
    if (linked) return bad(row.seq, 'altered');
    return bad(row.seq, (await hashExists(row.prevHash)) ? 're-linked' : 'deleted');
  };
  for await (const row of links) {
    if (pending !== null) {
      const verdict = await judge(pending, row);
      if (verdict) return verdict;
    }
    pending = row;
  }
  if (pending !== null) {
    const verdict = await judge(pending, null);
    if (verdict) return verdict;
  }
  if (strayAt !== null) return { ok: false, firstBadSequence: strayAt, problem: 'inserted' };
  return { ok: true, entries: expected - 1, head: prev };
}
