import { useEffect, useRef, useState } from 'preact/hooks';
import { Api, ApiError } from './api';
import type { AgentReport, ConsoleConfig, Session } from './types';

/** The agents' policy health (auditPolicy): blind spots highlighted. */
export function AgentsView(props: { api: Api; session: Session; config: ConsoleConfig }) {
  const [agents, setAgents] = useState<readonly AgentReport[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
    props.api
      .agents()
      .then((r) => setAgents(r.agents))
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [props.api]);
  return (
    <section aria-labelledby="agents-title">
      <h1 id="agents-title" tabIndex={-1} ref={heading}>
        Agents and policy health
      </h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!agents && !error && <p>Loading…</p>}
      {agents && (
        <ul class="cards">
          {agents.map((a) => (
            <li key={a.name} class={a.needsAttention ? 'card attention' : 'card'}>
              <h2>
                {a.name} <span class={a.needsAttention ? 'tag warn' : 'tag ok'}>{a.needsAttention ? 'Needs attention' : 'Healthy'}</span>
              </h2>
              <dl class="facts">
                <div>
                  <dt>Allowed</dt>
                  <dd>{a.policy.allow.join(', ') || '(nothing)'}</dd>
                </div>
                <div>
                  <dt>Denied</dt>
                  <dd>{a.policy.deny.join(', ') || '(nothing)'}</dd>
                </div>
                <div>
                  <dt>May execute</dt>
                  <dd>{a.policy.allowExecute ? 'yes' : 'no'}</dd>
                </div>
                <div>
                  <dt>Tools that can pass</dt>
                  <dd>{a.health.effectiveTools.join(', ') || '(none)'}</dd>
                </div>
              </dl>
              <BlindSpots agent={a} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function BlindSpots(props: { agent: AgentReport }) {
  const h = props.agent.health;
  const spots: string[] = [];
  if (h.inert) spots.push('The policy lets nothing through (inert).');
  if (h.hasClassBlindSpot)
    spots.push(`Allowed but refused by the execute class gate (allowExecute is false): ${h.classDeniedTools.join(', ')}.`);
  if (h.unknownTools.length) spots.push(`Names the catalog does not know: ${h.unknownTools.join(', ')}.`);
  if (h.adminByFilter.length)
    spots.push(`Admin skills a pattern or filter seems to allow but the guard does not: ${h.adminByFilter.join(', ')}.`);
  if (!spots.length) return <p class="muted">No blind spot.</p>;
  return (
    <div class="blind-spots">
      <h3>Blind spots</h3>
      <ul>
        {spots.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ul>
    </div>
  );
}
