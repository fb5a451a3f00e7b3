import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson } from '@zmodu/core';
import {
  AUDIT_CHAIN_GENESIS,
  AUDIT_PAYLOAD_MAX_CHARS,
  auditPayloadText,
  AuditChainLink,
  auditEntryHash,
  auditTimestamp,
  chainEntries,
  verifyChainLinks,
} from './audit-chain';
import { AuditEntry } from './audit-entry';
import { sampleAuditEntry } from '../testing';

const entry = (runId: string): AuditEntry => sampleAuditEntry(runId, { durationMs: 1.4, at: new Date('2026-01-02T03:04:05.678Z') });

function chain(n: number): AuditChainLink[] {
  const entries = Array.from({ length: n }, (_, i) => entry(`r${i + 1}`));
  return chainEntries({ seq: 0, hash: AUDIT_CHAIN_GENESIS }, entries).map((l, i) => ({
    ...l,
    entry: entries[i],
    at: auditTimestamp(entries[i].at),
  }));
}

async function verify(links: AuditChainLink[], strayAt: number | null = null) {
  const walk = async function* () {
    yield* links;
  };
  return verifyChainLinks(walk(), async (h) => links.some((l) => l.hash === h), strayAt);
}

describe('audit chain', () => {
  it('canonical JSON sorts keys at every depth, without whitespace, leaving undefined members out', () => {
    expect(canonicalJson({ b: 1, a: [{ d: null, c: 'x' }], e: undefined })).toBe('{"a":[{"c":"x","d":null}],"b":1}');
    expect(canonicalJson('\ud83d\ude00"')).toBe('"\ud83d\ude00\\""');
  });

  it('hashes exactly the canonical JSON of the documented fields (any entry, with or without arguments and result)', () => {
    const text = fc.option(fc.string({ unit: 'binary' }), { nil: null });
    fc.assert(
      fc.property(
        fc.record({
          runId: fc.string({ unit: 'binary' }),
          agent: text,
          tenantId: text,
          userId: text,
          skill: fc.string(),
          cause: text,
          durationMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
          tokens: fc.nat(),
          proposalId: fc.option(fc.string(), { nil: undefined }),
          approvers: fc.option(fc.array(fc.string({ unit: 'binary' })), { nil: undefined }),
          args: fc.option(fc.jsonValue(), { nil: undefined }),
          result: fc.option(fc.jsonValue(), { nil: undefined }),
        }),
        fc.nat(),
        (over, seq) => {
          const e = sampleAuditEntry('r', over as Partial<AuditEntry>);
          const at = auditTimestamp(e.at);
          const fields = {
            seq,
            prevHash: AUDIT_CHAIN_GENESIS,
            runId: e.runId,
            agent: e.agent,
            tenantId: e.tenantId,
            userId: e.userId,
            skill: e.skill,
            action: e.action,
            decision: e.decision,
            cause: e.cause,
            outcome: e.outcome,
            durationMs: Math.round(e.durationMs),
            tokens: Math.round(e.tokens),
            at,
            proposalId: e.proposalId ?? null,
            approvers: e.approvers ?? null,
            args: auditPayloadText(e.args),
            result: auditPayloadText(e.result),
          };
          const expected = createHash('sha256').update(canonicalJson(fields), 'utf8').digest('hex');
          expect(auditEntryHash(seq, AUDIT_CHAIN_GENESIS, e, at)).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps arguments and results as their JSON text, and caps a long one with its digest', () => {
    const value = { b: [1, { d: new Date('2026-03-01T00:00:00Z'), c: undefined }], a: 'x' };
    expect(auditPayloadText(value)).toBe('{"b":[1,{"d":"2026-03-01T00:00:00.000Z"}],"a":"x"}');
    expect(auditPayloadText(undefined)).toBeUndefined();
    expect(auditPayloadText(null)).toBe('null');
    const long = { s: 'y'.repeat(AUDIT_PAYLOAD_MAX_CHARS) };
    const capped = JSON.parse(auditPayloadText(long) as string) as Record<string, unknown>;
    expect(capped).toEqual({
      truncated: true,
      chars: JSON.stringify(long).length,
      sha256: createHash('sha256').update(JSON.stringify(long)).digest('hex'),
    });
    expect(auditPayloadText(capped)).toBe(auditPayloadText(long));
    expect(auditPayloadText({ n: BigInt(1) })).toBe('{"unserializable":true}');
  });

  it('hashes a timestamp at microsecond precision, as PostgreSQL stores it', () => {
    expect(auditTimestamp(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05.678000Z');
    const e = entry('r');
    expect(auditEntryHash(1, AUDIT_CHAIN_GENESIS, e, '2026-01-02T03:04:05.678000Z')).not.toBe(
      auditEntryHash(1, AUDIT_CHAIN_GENESIS, e, '2026-01-02T03:04:05.678001Z'),
    );
  });

  it('an intact chain verifies, with its length and head', async () => {
    const links = chain(5);
    expect(await verify(links)).toEqual({ ok: true, entries: 5, head: links[4].hash });
    expect(await verify([])).toEqual({ ok: true, entries: 0, head: AUDIT_CHAIN_GENESIS });
  });

  it('names the first bad entry: altered, deleted, inserted, re-linked', async () => {
    const links = chain(6);
    const altered = links.map((l) => (l.seq === 3 ? { ...l, entry: { ...l.entry, tokens: 99 } } : l));
    expect(await verify(altered)).toEqual({ ok: false, firstBadSequence: 3, problem: 'altered' });
    expect(await verify(links.filter((l) => l.seq !== 4))).toEqual({ ok: false, firstBadSequence: 4, problem: 'deleted' });
    expect(await verify(links.slice(1))).toEqual({ ok: false, firstBadSequence: 1, problem: 'deleted' });
    const forged = { ...links[2], hash: 'f'.repeat(64), entry: entry('forged') };
    const inserted = [...links.slice(0, 3).map((l, i) => (i === 2 ? forged : l)), ...links.slice(2).map((l) => ({ ...l, seq: l.seq + 1 }))];
    expect(await verify(inserted)).toEqual({ ok: false, firstBadSequence: 3, problem: 'inserted' });
    expect(await verify([...links.slice(0, 2), links[1], ...links.slice(2)])).toEqual({
      ok: false,
      firstBadSequence: 2,
      problem: 'inserted',
    });
    const relinked = links.map((l) => (l.seq === 5 ? { ...l, prevHash: links[2].hash } : l));
    expect(await verify(relinked)).toEqual({ ok: false, firstBadSequence: 5, problem: 're-linked' });
    expect(await verify(links, 7)).toEqual({ ok: false, firstBadSequence: 7, problem: 'inserted' });
    expect(await verify(relinked, 2)).toEqual({ ok: false, firstBadSequence: 2, problem: 'inserted' });
  });
});
