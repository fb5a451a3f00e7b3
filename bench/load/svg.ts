import type { MemorySample } from './rules';

export interface ChartOptions {
  readonly title: string;
  /** A line under the title, e.g. the flatness verdict. */
  readonly subtitle?: string;
  readonly width?: number;
  readonly height?: number;
}

const SERIES = [
  { key: 'rss', label: 'RSS', color: '#d9730d' },
  { key: 'heapUsed', label: 'heap used (after GC)', color: '#2463eb' },
] as const;

/**
 * The soak's memory as a small self-contained SVG line chart (no dependency): RSS and heap used in MiB against the
 * seconds since the soak began, with axes, grid lines and a legend. Deterministic: the same samples give the same text.
 */
export function memoryChartSvg(samples: readonly MemorySample[], options: ChartOptions): string {
  const width = options.width ?? 640;
  const height = options.height ?? 260;
  const pad = { left: 52, right: 16, top: options.subtitle ? 48 : 32, bottom: 56 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const points = [...samples].sort((a, b) => a.t - b.t);
  const tMax = Math.max(1, ...points.map((p) => p.t));
  const yMaxRaw = Math.max(1, ...points.map((p) => Math.max(p.rss, p.heapUsed) / 1024 / 1024));
  const yStep = niceStep(yMaxRaw / 4);
  const yMax = Math.ceil(yMaxRaw / yStep) * yStep;
  const tStep = niceStep(tMax / 6);
  const x = (t: number) => pad.left + (t / tMax) * plotW;
  const y = (mb: number) => pad.top + plotH - (mb / yMax) * plotH;
  const n = (v: number) => v.toFixed(1);

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${pad.left}" y="18" font-size="13" font-weight="bold">${escape(options.title)}</text>`);
  if (options.subtitle) out.push(`<text x="${pad.left}" y="34" fill="#444444">${escape(options.subtitle)}</text>`);
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    out.push(`<line x1="${pad.left}" y1="${n(y(v))}" x2="${pad.left + plotW}" y2="${n(y(v))}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${pad.left - 6}" y="${n(y(v) + 4)}" text-anchor="end">${label(v)}</text>`);
  }
  for (let t = 0; t <= tMax + 1e-9; t += tStep) {
    out.push(`<line x1="${n(x(t))}" y1="${pad.top + plotH}" x2="${n(x(t))}" y2="${pad.top + plotH + 4}" stroke="#888888"/>`);
    out.push(`<text x="${n(x(t))}" y="${pad.top + plotH + 16}" text-anchor="middle">${label(t)}</text>`);
  }
  out.push(
    `<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${pad.top + plotH}" stroke="#888888"/>`,
    `<line x1="${pad.left}" y1="${pad.top + plotH}" x2="${pad.left + plotW}" y2="${pad.top + plotH}" stroke="#888888"/>`,
    `<text x="${pad.left + plotW / 2}" y="${pad.top + plotH + 32}" text-anchor="middle">seconds into the soak</text>`,
    `<text x="14" y="${pad.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 14 ${pad.top + plotH / 2})">MiB</text>`,
  );
  for (const s of SERIES) {
    if (points.length === 0) break;
    const path = points.map((p) => `${n(x(p.t))},${n(y(p[s.key] / 1024 / 1024))}`).join(' ');
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${path}"/>`);
    for (const p of points) out.push(`<circle cx="${n(x(p.t))}" cy="${n(y(p[s.key] / 1024 / 1024))}" r="2" fill="${s.color}"/>`);
  }
  const legendY = height - 10;
  SERIES.forEach((s, i) => {
    const lx = pad.left + i * 150;
    out.push(`<line x1="${lx}" y1="${legendY - 4}" x2="${lx + 18}" y2="${legendY - 4}" stroke="${s.color}" stroke-width="2"/>`);
    out.push(`<text x="${lx + 24}" y="${legendY}">${escape(s.label)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** 1, 2 or 5 times a power of ten, at least `raw`. */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function label(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
