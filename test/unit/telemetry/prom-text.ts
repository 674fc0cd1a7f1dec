/**
 * A strict parser of the Prometheus text exposition format (0.0.4): every
 * line must be a HELP or TYPE comment, a sample of a declared family, or
 * blank; names, label syntax, escapes and values are checked, a family's
 * samples must be contiguous, and histogram buckets must be cumulative and
 * end in +Inf equal to _count. Throws on the first violation.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
/** Values as Prometheus reads them (Go's ParseFloat: NaN and Inf in any case). */
const VALUE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf(?:inity)?|nan)$/i;

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: Family | undefined;
  if (text !== '' && !text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const lines = text.split('\n');
  lines.pop();
  for (const [n, line] of lines.entries()) {
    const where = `line ${n + 1}`;
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (m === null) continue;
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`${where}: bad metric name ${name}`);
      let f = families.get(name);
      if (f === undefined) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
      else if (f.samples.length > 0 || closed.has(name))
        throw new Error(`${where}: ${kind} for ${name} after its samples`);
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`${where}: bad type ${rest}`);
        (f as { type: string }).type = rest;
      } else {
        (f as { help: string }).help = unescapeHelp(rest, where);
      }
      if (current !== undefined && current !== f) closed.add(current.name);
      current = f;
      continue;
    }
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, families);
    if (family === undefined) throw new Error(`${where}: sample ${sample.name} of no declared family`);
    if (family !== current) {
      if (closed.has(family.name)) throw new Error(`${where}: samples of ${family.name} are not contiguous`);
      if (current !== undefined) closed.add(current.name);
      current = family;
    }
    family.samples.push(sample);
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  const exact = families.get(sampleName);
  if (exact !== undefined) return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const f = families.get(sampleName.slice(0, -suffix.length));
    if (f !== undefined && (f.type === 'histogram' || f.type === 'summary')) return f;
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)(?: (-?\d+))?$/.exec(line);
  if (m === null) throw new Error(`${where}: malformed sample`);
  const [, name, rawLabels, rawValue] = m as unknown as [string, string, string | undefined, string];
  if (!VALUE.test(rawValue)) throw new Error(`${where}: bad value ${rawValue}`);
  return { name, labels: rawLabels === undefined ? {} : parseLabels(rawLabels, where), value: toNumber(rawValue) };
}

function toNumber(raw: string): number {
  const lower = raw.toLowerCase();
  if (lower === 'nan') return NaN;
  if (/inf/.test(lower)) return lower.startsWith('-') ? -Infinity : Infinity;
  return Number(raw);
}

function parseLabels(raw: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 1;
  const end = raw.length - 1;
  while (i < end) {
    const eq = raw.indexOf('=', i);
    if (eq === -1) throw new Error(`${where}: label without value`);
    const name = raw.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`${where}: bad label name ${name}`);
    if (Object.hasOwn(labels, name)) throw new Error(`${where}: label ${name} repeated`);
    if (raw[eq + 1] !== '"') throw new Error(`${where}: label value not quoted`);
    let j = eq + 2;
    let value = '';
    for (;;) {
      const c = raw[j];
      if (c === undefined) throw new Error(`${where}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const e = raw[j + 1];
        if (e === 'n') value += '\n';
        else if (e === '\\' || e === '"') value += e;
        else throw new Error(`${where}: bad escape`);
        j += 2;
        continue;
      }
      if (c === '\n') throw new Error(`${where}: raw newline in label value`);
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (raw[i] === ',') i++;
    else if (i !== end) throw new Error(`${where}: expected , or }`);
  }
  return labels;
}

function unescapeHelp(text: string, where: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => {
    if (c === 'n') return '\n';
    if (c === '\\') return '\\';
    throw new Error(`${where}: bad escape in HELP`);
  });
}

function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let entry = series.get(key);
    if (entry === undefined) series.set(key, (entry = { buckets: [] }));
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}: bucket without le`);
      entry.buckets.push([le === '+Inf' ? Infinity : Number(le), s.value]);
    } else if (s.name === `${f.name}_count`) {
      entry.count = s.value;
    }
  }
  for (const { buckets, count } of series.values()) {
    for (let i = 1; i < buckets.length; i++) {
      const [prevLe, prevV] = buckets[i - 1] as [number, number];
      const [le, v] = buckets[i] as [number, number];
      if (!(le > prevLe) || v < prevV) throw new Error(`${f.name}: buckets not cumulative`);
    }
    const last = buckets.at(-1);
    if (last === undefined || last[0] !== Infinity || last[1] !== count)
      throw new Error(`${f.name}: +Inf bucket missing or not equal to _count`);
  }
}

/** The value of one sample, found by name and a subset of its labels. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== name) continue;
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}
