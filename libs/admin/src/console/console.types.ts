// The answers of the console's own routes: a file without imports, so the console (libs/admin/console) reads the
// same types the server writes.

/** What GET /admin/console/session answers: who the token is, and the permissions the console needs to know. */
export interface ConsoleSession {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
  readonly decidePermission: string;
  readonly auditPermission: string;
  readonly agentsPermission: string;
}

/** What GET /admin/console/config.json answers (public: nothing secret). */
export interface ConsoleConfig {
  readonly title: string;
  readonly loginUrl: string | null;
  readonly pollIntervalMs: number;
  /** Where the admin API is, as seen from the console (`/admin`, or `/<global prefix>/admin`). */
  readonly apiBase: string;
  readonly tokenHandoffKey: string;
  readonly features: { readonly audit: boolean; readonly agents: boolean };
}
