import { Enforcer, newEnforcer, newModelFromString, StringAdapter } from 'casbin';
import { ActionClass, Guard } from '@zmodu/guard';
import { Kernel, nsPerOp } from './measure';
import { Row } from './report';

export const POLICY_SIZES = [10, 100, 1000] as const;
const STREAM_LENGTH = 2048;
const UNLISTED_POOL = 1000;
/** casbin needs a subject; the guard is per agent, so every request is from this one. */
const SUBJECT = 'agent';

/**
 * The guard's semantics as a casbin ACL: one allow line per allowed name and permitted class
 * (`read`, `propose`; `execute` only with allowExecute), one deny line per denied name for any
 * class, and deny-overrides ("allowed by some rule and denied by none"). No matching allow line
 * means deny, like a name missing from the allow list or an `execute` call with allowExecute false.
 */
const CASBIN_MODEL = `
[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act, eft

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = r.sub == p.sub && r.obj == p.obj && (r.act == p.act || p.act == "*")
`;

interface Policy {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  readonly allowExecute: boolean;
}

interface Stream {
  readonly actions: ActionClass[];
  readonly names: string[];
}

/** Small deterministic PRNG (mulberry32), so every run sees the same stream. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const toolName = (i: number) => `svc${i % 7}.tool_${i}`;

/** `size` allowed names; denied: two of them (deny overrides allow) and three names that are only denied. */
function buildPolicy(size: number): Policy {
  const allow = Array.from({ length: size }, (_, i) => toolName(i));
  const deny = [allow[1], allow[Math.floor(size / 2)], 'danger.wipe', 'danger.drop_table', 'danger.shell'];
  return { allow, deny, allowExecute: false };
}

function casbinPolicyText(policy: Policy): string {
  const classes = policy.allowExecute ? ['read', 'propose', 'execute'] : ['read', 'propose'];
  const lines: string[] = [];
  for (const name of policy.allow) for (const action of classes) lines.push(`p, ${SUBJECT}, ${name}, ${action}, allow`);
  for (const name of policy.deny) lines.push(`p, ${SUBJECT}, ${name}, *, deny`);
  return lines.join('\n');
}

/**
 * The mixed lookup stream: 40% allowed `read` names, 20% denied names (any class), 20% names on
 * no list, 20% allowed names called as `execute` (allowExecute is false). Names are fresh string
 * objects, as they would be when parsed from a model's output.
 */
function buildStream(policy: Policy, seed: number): Stream {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const denied = new Set(policy.deny);
  const allowedOnly = policy.allow.filter((n) => !denied.has(n));
  const classes: readonly ActionClass[] = ['read', 'propose', 'execute'];
  const actions: ActionClass[] = [];
  const names: string[] = [];
  for (let i = 0; i < STREAM_LENGTH; i++) {
    const r = random();
    let action: ActionClass;
    let name: string;
    if (r < 0.4) [action, name] = ['read', pick(allowedOnly)];
    else if (r < 0.6) [action, name] = [pick(classes), pick(policy.deny)];
    else if (r < 0.8) [action, name] = ['read', `unlisted.tool_${Math.floor(random() * UNLISTED_POOL)}`];
    else [action, name] = ['execute', pick(allowedOnly)];
    actions.push(action);
    names.push(name.split('').join('')); // a distinct string object with the same content
  }
  return { actions, names };
}

function setKernel(set: ReadonlySet<string>, { names }: Stream): Kernel {
  const n = names.length;
  let i = 0;
  return (ops) => {
    let acc = 0;
    for (let k = 0; k < ops; k++) {
      if (set.has(names[i])) acc++;
      if (++i === n) i = 0;
    }
    return acc;
  };
}

function guardKernel(guard: Guard, { actions, names }: Stream): Kernel {
  const n = names.length;
  let i = 0;
  return (ops) => {
    let acc = 0;
    for (let k = 0; k < ops; k++) {
      if (guard.check(actions[i], names[i]).allowed) acc++;
      if (++i === n) i = 0;
    }
    return acc;
  };
}

function casbinKernel(enforcer: Enforcer, { actions, names }: Stream): Kernel {
  const n = names.length;
  let i = 0;
  return (ops) => {
    let acc = 0;
    for (let k = 0; k < ops; k++) {
      if (enforcer.enforceSync(SUBJECT, names[i], actions[i])) acc++;
      if (++i === n) i = 0;
    }
    return acc;
  };
}

/** Throws unless casbin and the guard decide alike for every (class, name) pair of the stream. */
function assertSameDecisions(policy: Policy, enforcer: Enforcer, stream: Stream): { pairs: number; allowed: number } {
  const guard = new Guard({ allow: [...policy.allow], deny: [...policy.deny], allowExecute: policy.allowExecute });
  const seen = new Set<string>();
  let allowed = 0;
  for (let i = 0; i < stream.names.length; i++) {
    const [action, name] = [stream.actions[i], stream.names[i]];
    const key = `${action} ${name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const ours = guard.check(action, name).allowed;
    const theirs = enforcer.enforceSync(SUBJECT, name, action);
    if (ours !== theirs)
      throw new Error(
        `guard and casbin disagree on ${action} '${name}' with ${policy.allow.length} names: guard ${ours}, casbin ${theirs}`,
      );
    if (ours) allowed++;
  }
  if (allowed === 0 || allowed === seen.size) throw new Error('the lookup stream must mix allowed and denied decisions');
  return { pairs: seen.size, allowed };
}

export interface GuardBenchResult {
  readonly size: number;
  readonly setNs: number;
  readonly guardNs: number;
  readonly casbinNs: number;
  readonly casbinLines: number;
  readonly pairsChecked: number;
}

interface Case {
  readonly size: number;
  readonly policy: Policy;
  readonly stream: Stream;
  readonly enforcer: Enforcer;
  readonly casbinLines: number;
  readonly pairsChecked: number;
}

export async function runGuardBench(log: (line: string) => void): Promise<{ rows: Row[]; results: GuardBenchResult[] }> {
  const cases: Case[] = [];
  for (const size of POLICY_SIZES) {
    const policy = buildPolicy(size);
    const stream = buildStream(policy, 0x5eed + size);
    const policyText = casbinPolicyText(policy);
    const enforcer = await newEnforcer(newModelFromString(CASBIN_MODEL), new StringAdapter(policyText));
    const { pairs, allowed } = assertSameDecisions(policy, enforcer, stream);
    const casbinLines = CASBIN_MODEL.trim().split('\n').length + policyText.split('\n').length;
    log(
      `guard: ${size} names: casbin (${casbinLines} lines of model+policy) and the guard agree on all ${pairs} distinct lookups of the stream (${allowed} allowed)`,
    );
    cases.push({ size, policy, stream, enforcer, casbinLines, pairsChecked: pairs });
  }

  // Set.has and guard.check for every size in one interleaved measurement: same JIT state and
  // same machine conditions for all of them, which is what the flatness ratio needs.
  const kernels: Record<string, Kernel> = {};
  for (const c of cases) {
    const { allow, deny, allowExecute } = c.policy;
    kernels[`set${c.size}`] = setKernel(new Set(allow), c.stream);
    kernels[`guard${c.size}`] = guardKernel(new Guard({ allow: [...allow], deny: [...deny], allowExecute }), c.stream);
  }
  const fast = nsPerOp(kernels, { warmupMs: 150, roundMs: 10, rounds: 25 });

  const results: GuardBenchResult[] = [];
  for (const c of cases) {
    const casbinNs = nsPerOp({ casbin: casbinKernel(c.enforcer, c.stream) }, { warmupMs: 250, roundMs: 60, rounds: 7 }).casbin;
    const [setNs, guardNs] = [fast[`set${c.size}`], fast[`guard${c.size}`]];
    results.push({ size: c.size, setNs, guardNs, casbinNs, casbinLines: c.casbinLines, pairsChecked: c.pairsChecked });
    log(
      `guard: ${c.size} names: Set.has ${setNs.toFixed(1)} ns, guard.check ${guardNs.toFixed(1)} ns, casbin enforceSync ${casbinNs.toFixed(0)} ns`,
    );
  }

  const rows: Row[] = [];
  for (const r of results) {
    rows.push({
      name: `guard.check vs Set.has floor, ${r.size} names (ratio = guard/Set)`,
      value: r.guardNs,
      unit: 'ns/op',
      baseline: r.setNs,
      target: { text: 'ratio <= 10', met: r.guardNs / r.setNs <= 10 },
    });
  }
  for (const r of results) {
    const faster = r.casbinNs / r.guardNs;
    rows.push({
      name: `guard.check vs casbin enforceSync, ${r.size} names (ratio = guard/casbin, < 1: guard faster)`,
      value: r.guardNs,
      unit: 'ns/op',
      baseline: r.casbinNs,
      target: { text: 'ratio <= 0.01 (>= 100x faster)', met: faster >= 100 },
      note: `guard ${formatTimes(faster)} faster`,
    });
  }
  const first = results[0];
  const last = results[results.length - 1];
  rows.push({
    name: `guard.check flatness (ratio = ns at ${last.size} names / ns at ${first.size} names)`,
    value: last.guardNs,
    unit: 'ns/op',
    baseline: first.guardNs,
    target: { text: 'ratio <= 2', met: last.guardNs / first.guardNs <= 2 },
    note: `Set.has floor itself: ${formatTimes(last.setNs / first.setNs)}`,
  });
  return { rows, results };
}

function formatTimes(x: number): string {
  return `${x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2)}x`;
}
