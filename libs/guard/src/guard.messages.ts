export const INVALID_POLICY_MESSAGE = (what: string) =>
  `Invalid guard policy: ${what}. A policy is { allow: string[], deny?: string[], allowExecute?: boolean, budget?: number }.`;

export const INVALID_COST_MESSAGE = (cost: unknown) => `Guard.check cost must be a finite number >= 0 (got ${String(cost)}).`;
