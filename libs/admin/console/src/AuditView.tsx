import { useEffect, useRef, useState } from 'preact/hooks';
import { Api, ApiError } from './api';
import { has } from './decide';
import { AuditTable } from './RunView';
import type { AuditRecord, ConsoleConfig, Session } from './types';

/** The audit trail of one run (GET /admin/audit?run=…), for a caller who holds the audit permission. */
export function AuditView(props: { runId: string; api: Api; session: Session; config: ConsoleConfig }) {
  const [entries, setEntries] = useState<readonly AuditRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const allowed = props.config.features.audit && has(props.session, props.session.auditPermission);
  useEffect(() => {
    heading.current?.focus();
    if (!allowed) return;
    props.api
      .audit(props.runId)
      .then((r) => setEntries(r.entries))
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [props.runId, allowed]);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title" tabIndex={-1} ref={heading}>
        Audit trail of run <code class="wrap">{props.runId}</code>
      </h1>
      {!allowed && <p>The full audit trail needs the permission {props.session.auditPermission}, which you do not hold.</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {allowed && !entries && !error && <p>Loading…</p>}
      {entries && entries.length === 0 && <p>No audit entries for this run in your tenant.</p>}
      {entries && entries.length > 0 && <AuditTable entries={entries} caption={`${entries.length} entries, oldest first`} />}
    </section>
  );
}
