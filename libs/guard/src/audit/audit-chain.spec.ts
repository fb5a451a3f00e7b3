import {
  AUDIT_CHAIN_GENESIS,
  AuditChainLink,
  auditEntryHash,
  auditTimestamp,
  canonicalJson,
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
