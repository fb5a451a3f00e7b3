/**
 * One tool call of a run as callers read it. This file imports nothing: the approvals console reads it
 * (libs/admin/console type-checks it before any package is built).
 */
export interface ToolCallRecord {
  readonly id: string;
  readonly name: string;
  readonly arguments: unknown;
  readonly decision: 'allowed' | 'denied';
  readonly cause: string | null;
  readonly outcome: string;
  readonly ok: boolean;
  /** The JSON the model saw. */
  readonly observation: string;
  readonly durationMs: number;
}
