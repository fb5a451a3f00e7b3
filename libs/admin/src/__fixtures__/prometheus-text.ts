/** One sample of the Prometheus text format: the metric name, its labels (unescaped) and its value. */
export interface PromSample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/**
 * Parse the Prometheus text exposition format (version 0.0.4) back into samples, strictly: every line that is not
 * blank or a comment must be `name{label="value",...} number`, with label values escaped as the format says (\\, \",
 * \n). A line that does not parse throws, so a writer that breaks the format fails the test.
 */
export function parsePrometheusText(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (!name) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      while (line[i] !== '}') {
        const label = /^[a-zA-Z_][a-zA-Z0-9_]*="/.exec(line.slice(i))?.[0];
        if (!label) throw new Error(`bad label at ${i} in ${JSON.stringify(line)}`);
        i += label.length;
        let value = '';
        for (;;) {
          const c = line[i++];
          if (c === undefined) throw new Error(`unterminated label value in ${JSON.stringify(line)}`);
          if (c === '"') break;
          if (c === '\\') {
            const e = line[i++];
            if (e === 'n') value += '\n';
            else if (e === '\\' || e === '"') value += e;
            else throw new Error(`bad escape \\${e} in ${JSON.stringify(line)}`);
          } else value += c;
        }
        labels[label.slice(0, -2)] = value;
        if (line[i] === ',') i++;
        else if (line[i] !== '}') throw new Error(`expected , or } at ${i} in ${JSON.stringify(line)}`);
      }
      i++;
    }
    const rest = line.slice(i);
    const m = /^ (\S+)( -?\d+)?$/.exec(rest);
    if (!m) throw new Error(`bad value in ${JSON.stringify(line)}`);
    // As Prometheus reads it (Go's ParseFloat): NaN and Inf in any case; prom-client writes "Nan".
    const word = m[1].toLowerCase();
    const value = word === 'nan' ? Number.NaN : word === '+inf' ? Infinity : word === '-inf' ? -Infinity : Number(m[1]);
    if (Number.isNaN(value) && word !== 'nan') throw new Error(`bad number in ${JSON.stringify(line)}`);
    samples.push({ name, labels, value });
  }
  return samples;
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when there is none, an error when several. */
export function sampleValue(samples: readonly PromSample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}: name every label`);
  return found[0]?.value;
}
