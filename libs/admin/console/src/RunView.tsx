import { TableHead } from './TableHead';
import { useEffect, useState } from 'preact/hooks';
import { Api, ApiError } from './api';
import { formatDate, formatMs } from './format';
import type { AuditRecord, ProposalRun } from './types';

/** The agent run that produced a proposal: its steps and tool calls with the guard's decisions, and the run's audit entries. */
export function RunView(props: { api: Api; proposalId: string; onAudit: ((runId: string) => void) | null }) {
  const [data, setData] = useState<ProposalRun | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    props.api
      .run(props.proposalId)
      .then(setData)
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [props.api, props.proposalId]);

  return (
    <section aria-labelledby="run-title" class="panel">
      <h2 id="run-title">The agent run that produced it</h2>
      {error && <p class="muted">The run could not be read: {error}</p>}
      {!error && !data && <p>Loading the run…</p>}
      {data && !data.runId && <p class="muted">No agent run: this proposal was made directly.</p>}
      {data?.run && (
        <>
          <dl class="facts">
            <div>
              <dt>Agent</dt>
              <dd>{data.run.agent}</dd>
            </div>
            <div>
              <dt>Goal</dt>
              <dd>{data.run.goal}</dd>
            </div>
            <div>
              <dt>Status</dt>
              <dd>
                {data.run.status}
                {data.run.stoppedReason ? ` (${data.run.stoppedReason})` : ''}
              </dd>
            </div>
            <div>
              <dt>Finished</dt>
              <dd>{formatDate(data.run.finishedAt)}</dd>
            </div>
          </dl>
          <ol class="steps">
            {data.run.steps.map((s) => (
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
          {data.run.answer && (
            <p>
              <strong>Answer:</strong> {data.run.answer}
            </p>
          )}
        </>
      )}
      {data && data.runId && !data.run && <p class="muted">The run itself was not stored; its audit entries follow.</p>}
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
