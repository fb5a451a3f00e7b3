import { TableHead } from './TableHead';
import { display, flatten, formatAmount } from './format';
import type { Proposal } from './types';

interface Change {
  readonly what: string;
  readonly before: string;
  readonly after: string;
}

/** What changed between the version of a proposal the user read and the current one. */
export function changesBetween(before: Proposal, after: Proposal): Change[] {
  const out: Change[] = [];
  const push = (what: string, a: string, b: string) => {
    if (a !== b) out.push({ what, before: a, after: b });
  };
  push('Status', before.status, after.status);
  push('Version', String(before.version), String(after.version));
  push('Amount', formatAmount(before.amount), formatAmount(after.amount));
  const step = (p: Proposal) =>
    p.waitingStep ? `${p.waitingStep.name} (step ${p.waitingStep.index + 1}, ${p.waitingStep.permission})` : 'none';
  push('Waiting step', step(before), step(after));
  const steps = (p: Proposal) => p.steps.map((s) => `${s.name} (${s.permission})`).join(', ') || 'none';
  push('Approval steps', steps(before), steps(after));
  const a = new Map(flatten(before.payload));
  const b = new Map(flatten(after.payload));
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    push(`Payload: ${key}`, a.has(key) ? display(a.get(key)) : '(absent)', b.has(key) ? display(b.get(key)) : '(absent)');
  }
  for (const d of after.decisions.slice(before.decisions.length)) {
    const edit = d.edit ? `, with an edit (amount ${formatAmount(d.edit.before.amount)} → ${formatAmount(d.edit.after.amount)})` : '';
    out.push({
      what: `Decision on step ${d.step + 1}`,
      before: '(none)',
      after: `${d.decidedBy} ${d.decision === 'approve' ? 'approved' : 'rejected'}${edit}: ${d.reason}`,
    });
  }
  return out;
}

export function DiffView(props: { before: Proposal; after: Proposal; caption: string }) {
  const changes = changesBetween(props.before, props.after);
  if (changes.length === 0) return <p>Nothing visible changed.</p>;
  return (
    <table class="diff">
      <TableHead
        caption={props.caption}
        columns={['What', `You read (version ${props.before.version})`, `Now (version ${props.after.version})`]}
      />
      <tbody>
        {changes.map((c) => (
          <tr key={c.what}>
            <th scope="row" data-label="What">
              {c.what}
            </th>
            <td data-label="You read">
              <del>{c.before}</del>
            </td>
            <td data-label="Now">
              <ins>{c.after}</ins>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
