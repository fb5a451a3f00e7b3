import { Guard } from '@zmodu/guard';
import {
  AGENT_NAME_PATTERN,
  AgentSpec,
  MAX_MAX_STEPS,
  MAX_MAX_TOOL_CALLS_PER_TURN,
  MAX_MAX_MALFORMED_TOOL_CALLS,
  MAX_MAX_WAIT_MS,
  MAX_RUN_TIMEOUT_MS,
} from './agent-definition';
import { MISSING_GUARD_MESSAGE } from './agent.messages';
import { InvalidAgentSpecException } from './exceptions/invalid-agent-spec.exception';

/** Refuse a spec that cannot be built, saying what to add or fix. */
export function validateAgentSpec(spec: AgentSpec): void {
  if (spec === null || typeof spec !== 'object') throw new InvalidAgentSpecException(undefined, 'the spec is missing');
  const fail = (problem: string): never => {
    throw new InvalidAgentSpecException(spec.name, problem);
  };
  if (typeof spec.name !== 'string' || !AGENT_NAME_PATTERN.test(spec.name))
    fail(`name must be lower-case letters, digits, '-' or '_', starting with a letter (got ${JSON.stringify(spec.name)})`);
  if (spec.guard === undefined || spec.guard === null) fail(MISSING_GUARD_MESSAGE);
  try {
    new Guard(spec.guard);
  } catch (err) {
    fail((err as Error).message);
  }
  if (!spec.provider || typeof spec.provider.complete !== 'function')
    fail('provider must be a ModelProvider (an object with complete(request)), e.g. new ScriptedModelProvider([...])');
  if (!Array.isArray(spec.skills) && typeof spec.skills !== 'function')
    fail('skills must be an array of skill names or a filter function (skill) => boolean');
  if (spec.maxSteps !== undefined && (!Number.isInteger(spec.maxSteps) || spec.maxSteps < 1 || spec.maxSteps > MAX_MAX_STEPS))
    fail(`maxSteps must be a whole number from 1 to ${MAX_MAX_STEPS}`);
  const perTurn = spec.maxToolCallsPerTurn;
  if (perTurn !== undefined && (!Number.isInteger(perTurn) || perTurn < 1 || perTurn > MAX_MAX_TOOL_CALLS_PER_TURN))
    fail(`maxToolCallsPerTurn must be a whole number from 1 to ${MAX_MAX_TOOL_CALLS_PER_TURN}`);
  const malformed = spec.maxMalformedToolCalls;
  if (malformed !== undefined && (!Number.isInteger(malformed) || malformed < 0 || malformed > MAX_MAX_MALFORMED_TOOL_CALLS))
    fail(`maxMalformedToolCalls must be a whole number from 0 to ${MAX_MAX_MALFORMED_TOOL_CALLS}`);
  const timeout = spec.runTimeoutMs;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_RUN_TIMEOUT_MS))
    fail(`runTimeoutMs must be a whole number of milliseconds from 1 to ${MAX_RUN_TIMEOUT_MS} (e.g. 120000 for two minutes)`);
  const wait = spec.maxWaitMs;
  if (wait !== undefined && (!Number.isInteger(wait) || wait < 1 || wait > MAX_MAX_WAIT_MS))
    fail(`maxWaitMs must be a whole number of milliseconds from 1 to ${MAX_MAX_WAIT_MS} (e.g. 3600000 for an hour)`);
  if (spec.resumeOn !== undefined && spec.resumeOn !== 'all' && spec.resumeOn !== 'each')
    fail(`resumeOn must be 'all' (go on once every proposal of a wait is decided) or 'each' (once any is)`);
  for (const key of ['tokensPerRun', 'tokensPerPeriod', 'tokensPerUserPerPeriod'] as const) {
    const v = spec.budget?.[key];
    if (v !== undefined && !(typeof v === 'number' && v >= 0 && Number.isFinite(v))) fail(`budget.${key} must be a number >= 0`);
  }
  const share = spec.budget?.userShare;
  if (share !== undefined && !(typeof share === 'number' && share > 0 && share <= 1))
    fail('budget.userShare must be a fraction of the tenant budget, > 0 and <= 1 (e.g. 0.25)');
  if (spec.systemPrompt !== undefined && typeof spec.systemPrompt !== 'string') fail('systemPrompt must be a string');
  if (spec.memory !== undefined && typeof spec.memory?.recallBlock !== 'function') fail('memory must implement recallBlock(scope, goal)');
}
