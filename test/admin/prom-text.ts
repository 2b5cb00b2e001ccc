/** One sample of the Prometheus text format: name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * A small parser for the text exposition format 0.0.4: `# HELP` / `# TYPE` lines are checked
 * for shape, samples parsed into name, labels and value. Throws on a malformed line.
 */
export function parsePrometheusText(text: string): {
  samples: Sample[];
  types: Map<string, string>;
} {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type !== null) types.set(type[1] as string, type[2] as string);
      else if (!/^# HELP \S+ /.test(line)) throw new Error(`bad comment line: ${line}`);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`bad sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL))
      labels[key as string] = value as string;
    const value = Number(match[3] === '+Inf' ? Infinity : match[3]);
    if (Number.isNaN(value)) throw new Error(`bad value: ${line}`);
    samples.push({ name: match[1] as string, labels, value });
  }
  return { samples, types };
}

/** The value of the sample with this name whose labels include `labels`; 0 when absent. */
export function valueOf(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  const found = samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found?.value ?? 0;
}
