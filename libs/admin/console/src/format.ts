/** Formatting for people: amounts, dates, time left, a one-line subject of a payload, flattened payload fields. */

const amountFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

export function formatAmount(amount: number | null | undefined): string {
  return amount === null || amount === undefined ? '—' : amountFormat.format(amount);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });
}

/** Milliseconds until `iso` (negative when past); null without an expiry. */
export function msLeft(iso: string | null, now: number): number | null {
  if (!iso) return null;
  const t = new Date(iso).getTime();
  return Number.isNaN(t) ? null : t - now;
}

export function formatTimeLeft(ms: number | null): string {
  if (ms === null) return 'no expiry';
  if (ms <= 0) return 'expired';
  const minutes = Math.floor(ms / 60_000);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (days > 0) return `${days} d ${hours % 24} h`;
  if (hours > 0) return `${hours} h ${minutes % 60} min`;
  if (minutes > 0) return `${minutes} min`;
  return `${Math.max(1, Math.floor(ms / 1000))} s`;
}

function scalar(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return amountFormat.format(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return JSON.stringify(v);
}

/** A one-line subject: the payload's first scalar fields ("symbol ACME · side buy · qty 1,000"). */
export function subjectOf(payload: unknown): string {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return scalar(payload);
  const parts = Object.entries(payload as Record<string, unknown>)
    .filter(([, v]) => v === null || typeof v !== 'object')
    .slice(0, 4)
    .map(([k, v]) => `${k} ${scalar(v)}`);
  return parts.length ? parts.join(' · ') : '(no fields)';
}

/** The payload's leaves as [path, value] pairs ("legs[0].qty"), for the readable view and the diff. */
export function flatten(value: unknown, prefix = ''): [string, unknown][] {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v] as const) : Object.entries(value);
    if (entries.length === 0) return [[prefix || '(value)', value]];
    return entries.flatMap(([k, v]) => flatten(v, Array.isArray(value) ? `${prefix}${k}` : prefix ? `${prefix}.${k}` : String(k)));
  }
  return [[prefix || '(value)', value]];
}

export function display(v: unknown): string {
  return v === undefined ? '(none)' : scalar(v);
}

/** A label for a field name: "limitPrice" → "Limit price". */
export function labelOf(name: string): string {
  const spaced = name.replace(/[_-]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1).toLowerCase();
}

export function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}
