import { TableHead } from './TableHead';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Api, ApiError } from './api';
import { has, whyNotDecide } from './decide';
import { DiffView } from './DiffView';
import { EditPanel } from './EditPanel';
import { formatAmount, formatDate, formatTimeLeft, msLeft, subjectOf } from './format';
import { PayloadView } from './PayloadView';
import { RunView } from './RunView';
import type { ConsoleConfig, PipelineOutcome, Proposal, Session } from './types';
import { useNow, usePolling } from './usePolling';

interface Conflict {
  readonly before: Proposal;
  readonly after: Proposal;
  readonly message: string;
}

function outcomeText(o: PipelineOutcome): string {
  switch (o.verdict) {
    case 'executed':
      return `Approved and executed (amount ${formatAmount(o.amount)}).`;
    case 'approved_pending_next_step':
      return `Approved. It now waits for: ${(o.waitingFor ?? []).map((s) => `${s.name} (${s.permission})`).join(', ')}.`;
    case 'rejected_by_human':
      return 'Rejected.';
    default:
      return `${o.verdict}: ${o.status}${o.reason ? ` (${o.reason})` : ''}.`;
  }
}

/** One proposal: payload, run, decisions; approve or reject the version shown, or approve with edits. */
export function ProposalView(props: {
  id: string;
  api: Api;
  session: Session;
  config: ConsoleConfig;
  announce: (message: string) => void;
  onBack: () => void;
  onAudit: (runId: string) => void;
}) {
  const { api, session, id, announce } = props;
  const [shown, setShown] = useState<Proposal | null>(null);
  const [latest, setLatest] = useState<Proposal | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [outcome, setOutcome] = useState<PipelineOutcome | null>(null);
  const [reason, setReason] = useState('');
  const [reasonError, setReasonError] = useState(false);
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const now = useNow(1000);
  const heading = useRef<HTMLHeadingElement>(null);
  const conflictHeading = useRef<HTMLHeadingElement>(null);
  const reasonField = useRef<HTMLTextAreaElement>(null);
  const outcomeRef = useRef<HTMLParagraphElement>(null);

  usePolling(
    async () => {
      try {
        const p = await api.proposal(id);
        setLatest(p);
        setShown((s) => s ?? p);
        setLoadError(null);
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) setLoadError('No such proposal in your tenant.');
        else if (e instanceof ApiError) setLoadError(e.message);
      }
    },
    props.config.pollIntervalMs,
    [api, id],
  );

  const loaded = shown !== null;
  useEffect(() => heading.current?.focus(), [loaded]);
  useEffect(() => {
    if (conflict) conflictHeading.current?.focus();
  }, [conflict]);

  const onConflict = async (e: ApiError) => {
    const before = shown;
    const current = await api.proposal(id);
    setLatest(current);
    setShown(current);
    setEditing(false);
    if (before) setConflict({ before, after: current, message: e.message });
    announce(`Not applied: ${e.message} The changes are shown; decide again on the current version.`);
  };

  const decide = async (kind: 'approve' | 'reject', payload?: unknown) => {
    if (!shown?.waitingStep) return;
    if (!reason.trim()) {
      setReasonError(true);
      reasonField.current?.focus();
      return;
    }
    setReasonError(false);
    setBusy(true);
    setError(null);
    setOutcome(null);
    const body = { reason: reason.trim(), version: shown.version, step: shown.waitingStep.index };
    try {
      const o =
        kind === 'approve' ? await api.approve(id, payload === undefined ? body : { ...body, payload }) : await api.reject(id, body);
      setOutcome(o);
      setConflict(null);
      setEditing(false);
      setReason('');
      announce(outcomeText(o));
      const p = await api.proposal(id);
      setShown(p);
      setLatest(p);
      outcomeRef.current?.focus();
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) await onConflict(e);
      else {
        const message =
          e instanceof ApiError ? `${e.message}${typeof e.body.field === 'string' ? ` (field ${e.body.field})` : ''}` : String(e);
        setError(message);
        announce(`Not applied: ${message}`);
      }
    } finally {
      setBusy(false);
    }
  };

  if (!shown) {
    return (
      <section aria-labelledby="proposal-title">
        <h1 id="proposal-title" tabIndex={-1} ref={heading}>
          Proposal
        </h1>
        {loadError ? (
          <p class="error" role="alert">
            {loadError}
          </p>
        ) : (
          <p>Loading…</p>
        )}
        <BackLink onBack={props.onBack} />
      </section>
    );
  }

  const p = shown;
  const why = whyNotDecide(p, session);
  const changed = latest && latest.version !== p.version && !conflict ? latest : null;
  const left = msLeft(p.expiresAt, now);

  return (
    <article aria-labelledby="proposal-title">
      <BackLink onBack={props.onBack} />
      <h1 id="proposal-title" tabIndex={-1} ref={heading}>
        {p.action}: {subjectOf(p.payload)}
      </h1>

      {conflict && (
        <section class="panel conflict" aria-labelledby="conflict-title">
          <h2 id="conflict-title" tabIndex={-1} ref={conflictHeading}>
            Not applied: this proposal changed since you read it
          </h2>
          <p>{conflict.message}</p>
          <DiffView before={conflict.before} after={conflict.after} caption="What changed" />
          <p>The page now shows the current version {conflict.after.version}: read it, then decide again.</p>
          <button type="button" class="secondary" onClick={() => setConflict(null)}>
            Dismiss
          </button>
        </section>
      )}
      {changed && (
        <section class="panel notice" aria-labelledby="changed-title">
          <h2 id="changed-title">This proposal changed since you opened it</h2>
          <DiffView before={p} after={changed} caption="What changed meanwhile" />
          <button
            type="button"
            onClick={() => {
              setShown(changed);
              announce(`Showing version ${changed.version}.`);
            }}
          >
            Show the current version
          </button>
        </section>
      )}

      {outcome && (
        <p class="outcome" tabIndex={-1} ref={outcomeRef}>
          {outcomeText(outcome)}
        </p>
      )}

      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <span class={`tag status-${p.status}`}>{p.status}</span>
          </dd>
        </div>
        <div>
          <dt>Amount</dt>
          <dd class="num">{formatAmount(p.amount)}</dd>
        </div>
        <div>
          <dt>Proposer</dt>
          <dd>
            {p.proposer}
            {p.agent && ` (via agent ${p.agent})`}
            {p.proposer === session.userId && <strong class="tag warn"> you</strong>}
          </dd>
        </div>
        <div>
          <dt>Risk review</dt>
          <dd>
            {p.verdict}
            {p.reason ? `: ${p.reason}` : ''}
          </dd>
        </div>
        <div>
          <dt>Waiting step</dt>
          <dd>
            {p.waitingStep
              ? `${p.waitingStep.name} (step ${p.waitingStep.index + 1} of ${p.steps.length}), permission ${p.waitingStep.permission}`
              : '—'}
          </dd>
        </div>
        <div>
          <dt>Time left</dt>
          <dd>
            {formatTimeLeft(left)} <span class="muted">(expires {formatDate(p.expiresAt)})</span>
          </dd>
        </div>
        <div>
          <dt>Proposed</dt>
          <dd>{formatDate(p.createdAt)}</dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd>{p.version}</dd>
        </div>
      </dl>

      <section aria-labelledby="decide-title" class="panel decide">
        <h2 id="decide-title">Your decision</h2>
        {why ? (
          <p class={p.proposer === session.userId ? 'note sod' : 'note'} id="why-not">
            {why}
          </p>
        ) : (
          <>
            <p class="muted">
              You decide step {(p.waitingStep?.index ?? 0) + 1}, {p.waitingStep?.name}, on version {p.version} as shown on this page.
            </p>
            <div class="field">
              <label for="reason">Reason for your decision (required)</label>
              <textarea
                id="reason"
                ref={reasonField}
                rows={3}
                maxLength={1000}
                required
                aria-invalid={reasonError ? 'true' : undefined}
                aria-describedby={reasonError ? 'reason-error' : undefined}
                value={reason}
                onInput={(e) => setReason(e.currentTarget.value)}
              />
              {reasonError && (
                <p id="reason-error" class="error">
                  Give a reason: it is recorded with your decision.
                </p>
              )}
            </div>
            <div class="actions">
              <button type="button" disabled={busy} onClick={() => void decide('approve')}>
                Approve
              </button>
              <button type="button" class="danger" disabled={busy} onClick={() => void decide('reject')}>
                Reject
              </button>
              <button
                type="button"
                class="secondary"
                aria-expanded={editing}
                aria-controls="edit-panel"
                onClick={() => setEditing(!editing)}
              >
                {editing ? 'Close the edit form' : 'Approve with edits…'}
              </button>
            </div>
            <div id="edit-panel">
              {editing && (
                <EditPanel
                  key={p.version}
                  api={api}
                  proposal={p}
                  busy={busy}
                  onApprove={(payload) => void decide('approve', payload)}
                  onConflict={(e) => void onConflict(e)}
                  onCancel={() => setEditing(false)}
                />
              )}
            </div>
          </>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </section>

      <section aria-labelledby="payload-title" class="panel">
        <h2 id="payload-title">What is proposed</h2>
        <PayloadView value={p.payload} label="The payload" />
        {p.status === 'executed' && p.result !== undefined && (
          <>
            <h3>Result</h3>
            <PayloadView value={p.result} label="The result" />
          </>
        )}
      </section>

      <section aria-labelledby="steps-title" class="panel">
        <h2 id="steps-title">Approval steps</h2>
        <ol class="chain">
          {p.steps.map((s, i) => {
            const state = i < p.approvals ? 'signed' : p.waitingStep?.index === i ? 'waiting' : p.status === 'pending' ? 'to come' : '—';
            return (
              <li key={`${i}-${s.name}`} class={`step-${state.replace(' ', '-')}`}>
                {s.name} <span class="muted">({s.permission})</span>: <strong>{state}</strong>
              </li>
            );
          })}
        </ol>
        <h3>Decisions so far</h3>
        {p.decisions.length === 0 ? (
          <p class="muted">None yet.</p>
        ) : (
          <table class="calls decisions">
            <TableHead caption="Decisions, oldest first" columns={['Step', 'Who', 'Decision', 'Reason', 'When']} />
            <tbody>
              {p.decisions.map((d, i) => (
                <tr key={i}>
                  <td data-label="Step">{d.step + 1}</td>
                  <th scope="row" data-label="Who">
                    {d.decidedBy}
                    {d.decidedBy === session.userId && ' (you)'}
                  </th>
                  <td data-label="Decision">
                    {d.decision === 'approve' ? 'approved' : 'rejected'} version {d.version}
                    {d.edit && (
                      <span class="muted">
                        {' '}
                        with an edit: amount {formatAmount(d.edit.before.amount)} → {formatAmount(d.edit.after.amount)}
                      </span>
                    )}
                  </td>
                  <td data-label="Reason">{d.reason}</td>
                  <td data-label="When">{formatDate(d.at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <RunView
        api={api}
        proposalId={p.id}
        onAudit={props.config.features.audit && has(session, session.auditPermission) ? props.onAudit : null}
      />
    </article>
  );
}

function BackLink(props: { onBack: () => void }) {
  return (
    <p>
      <button type="button" class="link" onClick={props.onBack}>
        ← Back to the queue
      </button>
    </p>
  );
}
