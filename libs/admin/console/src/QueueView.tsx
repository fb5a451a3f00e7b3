import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Api, ApiError } from './api';
import { whyNotDecide } from './decide';
import { formatAmount, formatTimeLeft, msLeft, subjectOf } from './format';
import { hrefOf } from './route';
import type { ConsoleConfig, Proposal, Session } from './types';
import { useNow, usePolling } from './usePolling';

export type SortKey = 'subject' | 'action' | 'amount' | 'proposer' | 'step' | 'expires';

/** The queue's sort, filter and selection: kept by the app, so they survive a visit to a proposal and every refresh. */
export interface QueueState {
  readonly sort: SortKey;
  readonly descending: boolean;
  readonly text: string;
  readonly action: string;
  readonly mineOnly: boolean;
  readonly selectedId: string | null;
}

export const DEFAULT_QUEUE_STATE: QueueState = {
  sort: 'expires',
  descending: false,
  text: '',
  action: '',
  mineOnly: false,
  selectedId: null,
};

const COLUMNS: { key: SortKey; label: string }[] = [
  { key: 'subject', label: 'Subject' },
  { key: 'action', label: 'Action' },
  { key: 'amount', label: 'Amount' },
  { key: 'proposer', label: 'Proposer' },
  { key: 'step', label: 'Waiting step' },
  { key: 'expires', label: 'Time left' },
];

function sortValue(p: Proposal, key: SortKey): string | number {
  switch (key) {
    case 'subject':
      return subjectOf(p.payload).toLowerCase();
    case 'action':
      return p.action;
    case 'amount':
      return p.amount ?? -Infinity;
    case 'proposer':
      return p.proposer.toLowerCase();
    case 'step':
      return p.waitingStep?.name ?? '';
    case 'expires':
      return p.expiresAt ? new Date(p.expiresAt).getTime() : Infinity;
  }
}

function matches(p: Proposal, text: string): boolean {
  if (!text) return true;
  const hay = [subjectOf(p.payload), p.action, p.proposer, p.reason ?? '', p.waitingStep?.name ?? '', p.waitingStep?.permission ?? '', p.id]
    .join(' ')
    .toLowerCase();
  return text
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

/** The pending queue of the caller's tenant: sortable, filterable, refreshed every config.pollIntervalMs. */
export function QueueView(props: {
  api: Api;
  session: Session;
  config: ConsoleConfig;
  state: QueueState;
  onState: (update: (s: QueueState) => QueueState) => void;
  onOpen: (id: string) => void;
}) {
  const { api, session, config, state, onState } = props;
  const [items, setItems] = useState<readonly Proposal[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [refreshedAt, setRefreshedAt] = useState<Date | null>(null);
  const [tick, setTick] = useState(0);
  const now = useNow(1000);
  const heading = useRef<HTMLHeadingElement>(null);

  usePolling(
    async () => {
      try {
        const page = await api.pending();
        setItems(page.items);
        setTotal(page.total);
        setError(null);
        setRefreshedAt(new Date());
      } catch (e) {
        setError(e instanceof ApiError && e.status === 403 ? `You may not read the queue: ${e.message}` : `Refresh failed: ${String(e)}`);
      }
    },
    config.pollIntervalMs,
    [api, tick],
  );

  const loaded = items !== null;
  useEffect(() => {
    // On mount and when the first page arrives; back from a proposal: focus its row's link; else the heading.
    const id = state.selectedId;
    const link = id ? document.getElementById(`open-${id}`) : null;
    if (link) link.focus();
    else heading.current?.focus();
  }, [loaded]);

  const actions = useMemo(() => [...new Set((items ?? []).map((p) => p.action))].sort(), [items]);
  const shown = useMemo(() => {
    const list = (items ?? []).filter(
      (p) => matches(p, state.text) && (!state.action || p.action === state.action) && (!state.mineOnly || !whyNotDecide(p, session)),
    );
    const dir = state.descending ? -1 : 1;
    return [...list].sort((a, b) => {
      const x = sortValue(a, state.sort);
      const y = sortValue(b, state.sort);
      return (x < y ? -1 : x > y ? 1 : 0) * dir || (a.createdAt < b.createdAt ? 1 : -1);
    });
  }, [items, state, session]);

  const set = (patch: Partial<QueueState>) => onState((s) => ({ ...s, ...patch }));
  const sortBy = (key: SortKey) => onState((s) => ({ ...s, sort: key, descending: s.sort === key ? !s.descending : key === 'amount' }));

  return (
    <section aria-labelledby="queue-title">
      <h1 id="queue-title" tabIndex={-1} ref={heading}>
        Pending approvals
      </h1>
      <p class="muted">
        Tenant {session.tenantId}: {total} pending.{' '}
        {refreshedAt && (
          <span>
            Refreshed at {refreshedAt.toLocaleTimeString('en-GB')}, every {Math.round(config.pollIntervalMs / 1000)} s.
          </span>
        )}{' '}
        <button type="button" class="link" onClick={() => setTick((t) => t + 1)}>
          Refresh now
        </button>
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <form class="filters" role="search" aria-label="Filter the queue" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="filter-text">Filter</label>
          <input
            id="filter-text"
            type="search"
            value={state.text}
            aria-describedby="filter-hint"
            onInput={(e) => set({ text: e.currentTarget.value })}
          />
          <span id="filter-hint" class="hint">
            Subject, proposer, reason or step
          </span>
        </div>
        <div class="field">
          <label for="filter-action">Action</label>
          <select id="filter-action" value={state.action} onChange={(e) => set({ action: e.currentTarget.value })}>
            <option value="">All actions</option>
            {actions.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <div class="field check">
          <input id="filter-mine" type="checkbox" checked={state.mineOnly} onChange={(e) => set({ mineOnly: e.currentTarget.checked })} />
          <label for="filter-mine">Only the ones I can decide</label>
        </div>
      </form>
      {items === null && !error && <p>Loading the queue…</p>}
      {items !== null && (
        <table class="queue">
          <caption>
            {shown.length} of {items.length} shown, sorted by {COLUMNS.find((c) => c.key === state.sort)?.label.toLowerCase()}{' '}
            {state.descending ? 'descending' : 'ascending'}
          </caption>
          <thead>
            <tr>
              {COLUMNS.map((c) => (
                <th key={c.key} scope="col" aria-sort={state.sort === c.key ? (state.descending ? 'descending' : 'ascending') : undefined}>
                  <button type="button" class="sort" onClick={() => sortBy(c.key)}>
                    {c.label}
                    <span aria-hidden="true" class="arrow">
                      {state.sort === c.key ? (state.descending ? ' ▼' : ' ▲') : ' ↕'}
                    </span>
                  </button>
                </th>
              ))}
              <th scope="col">Risk review</th>
            </tr>
          </thead>
          <tbody>
            {shown.length === 0 && (
              <tr>
                <td colSpan={7}>{items.length ? 'No pending proposal matches the filter.' : 'Nothing waits for a decision.'}</td>
              </tr>
            )}
            {shown.map((p) => {
              const why = whyNotDecide(p, session);
              const left = msLeft(p.expiresAt, now);
              return (
                <tr key={p.id} class={p.id === state.selectedId ? 'selected' : undefined} data-id={p.id}>
                  <th scope="row" data-label="Subject">
                    <a
                      id={`open-${p.id}`}
                      href={hrefOf({ view: 'proposal', id: p.id })}
                      onClick={(e) => {
                        e.preventDefault();
                        props.onOpen(p.id);
                      }}
                    >
                      {subjectOf(p.payload)}
                    </a>
                    <span class={why ? 'tag' : 'tag ok'}>
                      {p.proposer === session.userId ? 'You proposed this' : why ? 'View only' : 'You can decide'}
                    </span>
                  </th>
                  <td data-label="Action">{p.action}</td>
                  <td data-label="Amount" class="num">
                    {formatAmount(p.amount)}
                  </td>
                  <td data-label="Proposer">
                    {p.proposer}
                    {p.agent && <span class="muted"> via {p.agent}</span>}
                  </td>
                  <td data-label="Waiting step">
                    {p.waitingStep ? (
                      <>
                        {p.waitingStep.name}{' '}
                        <span class="muted">
                          (step {p.waitingStep.index + 1} of {p.steps.length}; needs {p.waitingStep.permission})
                        </span>
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td data-label="Time left" class={left !== null && left < 3_600_000 ? 'soon' : undefined}>
                    <time dateTime={p.expiresAt ?? undefined}>{formatTimeLeft(left)}</time>
                  </td>
                  <td data-label="Risk review">{p.reason ?? '—'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
