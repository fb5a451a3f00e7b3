import { display, labelOf } from './format';

/** A payload for people: nested definition lists (objects), numbered lists (arrays), and the JSON behind a disclosure. */
export function PayloadView(props: { value: unknown; label: string }) {
  return (
    <div class="payload">
      <Value value={props.value} />
      <details>
        <summary>{props.label} as JSON</summary>
        <pre tabIndex={0}>{JSON.stringify(props.value, null, 2)}</pre>
      </details>
    </div>
  );
}

function Value(props: { value: unknown }) {
  const v = props.value;
  if (Array.isArray(v)) {
    if (v.length === 0) return <span class="muted">(empty list)</span>;
    return (
      <ol>
        {v.map((item, i) => (
          <li key={i}>
            <Value value={item} />
          </li>
        ))}
      </ol>
    );
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v);
    if (entries.length === 0) return <span class="muted">(no fields)</span>;
    return (
      <dl class="fields">
        {entries.map(([k, x]) => (
          <div key={k}>
            <dt>{labelOf(k)}</dt>
            <dd>
              <Value value={x} />
            </dd>
          </div>
        ))}
      </dl>
    );
  }
  return <span>{display(v)}</span>;
}
