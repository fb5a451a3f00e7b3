/** The shapes the console reads over HTTP (see the console contract): the server's types, with dates as ISO strings. */
import type { AuditRecord as ServerAuditRecord } from '../../../guard/src/audit/audit-entry';
import type { ToolCallRecord } from '../../../agent/src/tool-call-record';
import type { ConsoleConfig as ServerConsoleConfig, ConsoleSession } from '../../src/console/console.types';
import type {
  ApprovalStep as ServerStep,
  DecisionRecord,
  PipelineOutcome as ServerOutcome,
  ProposalRecord,
} from '../../../pipeline/src/proposal.types';

export type ConsoleConfig = ServerConsoleConfig;
export type Session = ConsoleSession;

/** A server type as JSON carries it: dates become ISO strings. */
type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? readonly Wire<U>[]
    : T extends object
      ? { readonly [K in keyof T]: Wire<T[K]> }
      : T;

export type ApprovalStep = ServerStep;
export type Decision = Wire<DecisionRecord>;
export type Proposal = Wire<ProposalRecord>;
export type PipelineOutcome = Wire<ServerOutcome>;

export interface ProposalPage {
  readonly items: readonly Proposal[];
  readonly total: number;
  readonly page: number;
  readonly limit: number;
}

/** A JSON Schema, as far as the edit form reads it. */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly title?: string;
  readonly description?: string;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly items?: JsonSchema;
}

export interface ActionSchema {
  readonly action: string;
  readonly description: string;
  readonly schema: JsonSchema;
}

export type Preview =
  | {
      readonly ok: true;
      readonly amount: number | null;
      readonly previousAmount: number | null;
      readonly steps: readonly ApprovalStep[];
      readonly extraSteps: readonly ApprovalStep[];
      readonly restarts: boolean;
      readonly risk: { readonly verdict: string; readonly reason: string | null };
    }
  | { readonly ok: false; readonly reason: string; readonly field?: string };

export type AuditRecord = Wire<ServerAuditRecord>;

export type RunToolCall = Omit<ToolCallRecord, 'observation'>;

export interface Run {
  readonly id: string;
  readonly agent: string;
  readonly goal: string;
  readonly status: string;
  readonly answer: string | null;
  readonly stoppedReason: string | null;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly steps: readonly { readonly index: number; readonly text: string | null; readonly toolCalls: readonly RunToolCall[] }[];
  readonly waitingFor: readonly string[];
  readonly waitUntil: string | null;
  readonly decisions: readonly { readonly proposalId: string; readonly status: string }[];
  readonly proposedAtStep: number | null;
}

export interface ProposalRun {
  readonly runId: string | null;
  readonly run: Run | null;
  readonly calls: readonly AuditRecord[];
}

export interface PolicyHealth {
  readonly inert: boolean;
  readonly unknownTools: readonly string[];
  readonly classDeniedTools: readonly string[];
  readonly hasClassBlindSpot: boolean;
  readonly effectiveTools: readonly string[];
  readonly adminByFilter: readonly string[];
}

export interface AgentReport {
  readonly name: string;
  readonly skills: readonly string[];
  readonly policy: {
    readonly allow: readonly string[];
    readonly deny: readonly string[];
    readonly allowExecute: boolean;
    readonly budget: number | null;
  };
  readonly health: PolicyHealth;
  readonly needsAttention: boolean;
}

export interface AgentsReport {
  readonly agents: readonly AgentReport[];
}
