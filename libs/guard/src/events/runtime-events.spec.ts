import { AgentAuditLog } from '../audit/agent-audit-log';
import { InMemoryAuditLogStore } from '../audit/in-memory-audit-log.store';
import { InMemoryTokenQuotaStore } from '../quota/in-memory-token-quota.store';
import { TokenQuota } from '../quota/token-quota';
import { sampleAuditEntry } from '../testing/sample-audit-entry';
import { RuntimeEvent, RuntimeEvents } from './runtime-events';

describe('RuntimeEvents', () => {
  it('tells every observer of the audit log entries and token charges; unsubscribing stops it', async () => {
    const events = new RuntimeEvents();
    const seen: RuntimeEvent[] = [];
    const stop = events.subscribe((e) => seen.push(e));
    const audit = new AgentAuditLog(new InMemoryAuditLogStore(), {}, events);
    const quota = new TokenQuota(new InMemoryTokenQuotaStore(), {}, undefined, events);
    audit.record(sampleAuditEntry('r1', { skill: 'order.cancel', action: 'execute', decision: 'denied', cause: 'denied_execute_class' }));
    await quota.chargeQuietly({ tenantId: 'acme', agent: 'trader', userId: 'u' }, 12);
    await quota.chargeQuietly({ tenantId: 'acme', agent: 'trader' }, 0); // nothing charged, nothing told
    await quota.charge({ tenantId: 'globex', agent: 'trader' }, 3);
    expect(seen).toEqual([
      { type: 'tool_call', entry: expect.objectContaining({ runId: 'r1', skill: 'order.cancel', cause: 'denied_execute_class' }) },
      { type: 'tokens', tenantId: 'acme', agent: 'trader', tokens: 12 },
      { type: 'tokens', tenantId: 'globex', agent: 'trader', tokens: 3 },
    ]);
    stop();
    audit.record(sampleAuditEntry('r2'));
    expect(seen).toHaveLength(3);
    await audit.close();
  });

  it('an observer that throws or rejects never fails the call: the entry is recorded, the charge made, the failure counted', async () => {
    const events = new RuntimeEvents();
    const calls: string[] = [];
    events.subscribe(() => {
      throw new Error('metrics broke');
    });
    events.subscribe(() => Promise.reject(new Error('async metrics broke')) as unknown as void);
    events.subscribe((e) => void calls.push(e.type)); // a later observer still hears
    const store = new InMemoryAuditLogStore();
    const audit = new AgentAuditLog(store, {}, events);
    const quotaStore = new InMemoryTokenQuotaStore();
    const quota = new TokenQuota(quotaStore, {}, undefined, events);
    expect(() => audit.record(sampleAuditEntry('r1'))).not.toThrow();
    await expect(quota.chargeQuietly({ tenantId: 'acme', agent: 'trader' }, 5)).resolves.toBeUndefined();
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['tool_call', 'tokens']);
    expect(events.failures).toBe(4);
    expect(await audit.query({ runId: 'r1' })).toHaveLength(1);
    expect(await quotaStore.used({ tenantId: 'acme', agent: 'trader' }, quota.currentPeriod())).toBe(5);
    await audit.close();
  });

  it('refuses an observer that is not a function', () => {
    expect(() => new RuntimeEvents().subscribe('metrics' as unknown as () => void)).toThrow(/needs a function/);
  });
});
