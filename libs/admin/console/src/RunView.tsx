import { TableHead } from './TableHead';
import { useEffect, useState } from 'preact/hooks';
import { Api, ApiError } from './api';
import { formatDate, formatMs } from './format';
import type { AuditRecord, ProposalRun } from './types';

/** While the run may still change (it waits for a decision, or goes on after it), it is read again this often. */
const RUN_POLL_MS = 2000;
const SETTLED = new Set(['succeeded', 'failed']);

/**
 * The agent run that produced a proposal: its state (waiting for this decision, going on after it, ended), its steps
 * and tool calls with the guard's decisions (those after the decision set apart: what the agent did with it), and the
 * run's audit entries. Read again while the run is not ended.
 */
export function RunView(props: { api: Api; proposalId: string; onAudit: ((runId: string) => void) | null }) {
  const [data, setData] = useState<ProposalRun | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () =>
      props.api
        .run(props.proposalId)
        .then((got) => {
          if (stopped) return;
          setData(got);
          setError(null);
          if (got.run && !SETTLED.has(got.run.status)) timer = setTimeout(read, RUN_POLL_MS);
        })
        .catch((e: unknown) => {
          if (!stopped) setError(e instanceof ApiError ? e.message : String(e));
        });
    void read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [props.api, props.proposalId]);

  const run = data?.run ?? null;
  const at = run?.proposedAtStep ?? null;
  const before = run ? run.steps.filter((s) => at === null || s.index <= at) : [];
  const after = run && at !== null ? run.steps.filter((s) => s.index > at) : [];
  const decision = run?.decisions.find((d) => d.proposalId === props.proposalId) ?? null;
  return (
    <section aria-labelledby="run-title" class="panel">
      <h2 id="run-title">The agent run that produced it</h2>
      {error && <p class="muted">The run could not be read: {error}</p>}
      {!error && !data && <p>Loading the run…</p>}
      {data && !data.runId && <p class="muted">No agent run: this proposal was made directly.</p>}
      {run && (
        <>
          <dl class="facts">
            <div>
              <dt>Agent</dt>
              <dd>{run.agent}</dd>
            </div>
            <div>
              <dt>Goal</dt>
              <dd>{run.goal}</dd>
            </div>
            <div>
              <dt>Status</dt>
              <dd>
                {run.status}
                {run.stoppedReason && run.stoppedReason !== run.status ? ` (${run.stoppedReason})` : ''}
              </dd>
            </div>
            {run.status === 'waiting' && (
              <div>
                <dt>Waits for</dt>
                <dd>
                  {run.waitingFor.includes(props.proposalId) ? 'the decision on this proposal' : 'other decisions'}
                  {run.waitingFor.length > 1 ? ` (and ${run.waitingFor.length - 1} more)` : ''}, until {formatDate(run.waitUntil)}: it goes
                  on once decided
                </dd>
              </div>
            )}
            {decision && (
              <div>
                <dt>Decision told to the agent</dt>
                <dd>{decision.status}</dd>
              </div>
            )}
            <div>
              <dt>Finished</dt>
              <dd>{formatDate(run.finishedAt)}</dd>
            </div>
          </dl>
          <Steps steps={before} class="steps" />
          {after.length > 0 && (
            <>
              <h3>After the decision</h3>
              <Steps steps={after} class="steps steps-after" />
            </>
          )}
          {decision && after.length === 0 && !SETTLED.has(run.status) && <p class="muted">The run goes on with the decision…</p>}
          {run.answer && (
            <p>
              <strong>Answer:</strong> {run.answer}
            </p>
          )}
        </>
      )}
      {data && data.runId && !run && <p class="muted">The run itself was not stored; its audit entries follow.</p>}
      {data && data.calls.length > 0 && <AuditTable entries={data.calls} caption="Audit entries of the run (oldest first)" />}
      {data?.runId && props.onAudit && (
        <p>
          <button type="button" class="link" onClick={() => props.onAudit?.(data.runId as string)}>
            Open the full audit trail of run {data.runId}
          </button>
        </p>
      )}
    </section>
  );
}

function Steps(props: { steps: NonNullable<ProposalRun['run']>['steps']; class: string }) {
  return (
    <ol class={props.class}>
      {props.steps.map((s) => (
        <li key={s.index}>
          <h3>Step {s.index + 1}</h3>
          {s.text && <p>{s.text}</p>}
          {s.toolCalls.length > 0 && (
            <table class="calls">
              <TableHead caption={`Tool calls of step ${s.index + 1}`} columns={['Tool', 'Arguments', 'Guard', 'Outcome']} />
              <tbody>
                {s.toolCalls.map((c) => (
                  <tr key={c.id}>
                    <th scope="row" data-label="Tool">
                      {c.name}
                    </th>
                    <td data-label="Arguments">
                      <code class="wrap">{JSON.stringify(c.arguments)}</code>
                    </td>
                    <td data-label="Guard" class={c.decision === 'denied' ? 'denied' : 'allowed'}>
                      {c.decision}
                      {c.cause ? ` (${c.cause})` : ''}
                    </td>
                    <td data-label="Outcome">
                      {c.outcome} <span class="muted">{formatMs(c.durationMs)}</span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </li>
      ))}
    </ol>
  );
}

export function AuditTable(props: { entries: readonly AuditRecord[]; caption: string }) {
  return (
    <table class="calls">
      <TableHead caption={props.caption} columns={['When', 'Skill', 'Who', 'Guard', 'Outcome']} />
      <tbody>
        {props.entries.map((e) => (
          <tr key={e.id}>
            <td data-label="When">{formatDate(e.at)}</td>
            <th scope="row" data-label="Skill">
              {e.skill}
              {e.proposalId ? <span class="muted"> (proposal {e.proposalId.slice(0, 8)})</span> : null}
            </th>
            <td data-label="Who">
              {e.userId} <span class="muted">via {e.agent}</span>
              {e.approvers?.length ? <span class="muted">; approved by {e.approvers.join(', ')}</span> : null}
            </td>
            <td data-label="Guard" class={e.decision === 'denied' ? 'denied' : 'allowed'}>
              {e.decision}
              {e.cause ? ` (${e.cause})` : ''}
            </td>
            <td data-label="Outcome">
              {e.outcome} <span class="muted">{formatMs(e.durationMs)}</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
