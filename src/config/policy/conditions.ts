/**
 * Grant conditions: CEL expressions (`when:` on a grant row) over the caller,
 * the tool, the call's arguments and the request. They are parsed, type
 * checked against the declared variables and cost-bounded when the policy
 * loads; a loaded condition is only ever evaluated, and an evaluation that
 * fails for any reason reports `undefined`, which callers treat as a denial.
 */
import type { CelEnv, CelInput, CelType } from '@bufbuild/cel';
import { RE2JS } from 're2js';
import { cel } from './cel.ts';
import { BoundedMemo } from '../../bounded/memo.ts';
import { checkCondition, INT64_MAX, INT64_MIN, MAX_ITERATIONS, type RecordType } from './condition-check.ts';

/** Longest condition source accepted, in characters. */
export const MAX_CONDITION_LENGTH = 2048;
/** Most expression nodes (after macro expansion) in one condition. */
const MAX_CONDITION_NODES = 256;
/** Bound on the estimated cost: nodes, each node inside a comprehension counted MAX_ITERATIONS times per level. */
const MAX_CONDITION_COST = 100_000;

/** `matches` compiles each pattern once (RE2: linear in the input), not once per evaluation. */
const patterns = new BoundedMemo<RE2JS>(256);
const re2 = { compile: (pattern: string) => patterns.get(pattern, (p) => RE2JS.compile(p)) };

/** What a row grants, which decides what its condition may read. */
export type ConditionSurface = 'tool' | 'resource' | 'prompt';

interface Setup {
  /** What a condition on each surface's rows may read. Everything else is a compile error. */
  readonly variables: Readonly<Record<ConditionSurface, Readonly<Record<string, RecordType | CelType>>>>;
  readonly env: CelEnv;
}
/** Built with the first condition compiled, so CEL loads only for a policy that has conditions (see cel.ts). */
let setup: Setup | undefined;

function celSetup(): Setup {
  if (setup !== undefined) return setup;
  const {
    cel: { CelScalar, celEnv, listType, mapType, objectType },
    strings,
  } = cel();
  const PRINCIPAL: RecordType = {
    kind: 'record',
    name: 'principal',
    fields: {
      id: CelScalar.STRING,
      scopes: listType(CelScalar.STRING),
      strength: CelScalar.STRING,
      claims: mapType(CelScalar.STRING, CelScalar.DYN),
    },
  };
  const TOOL: RecordType = {
    kind: 'record',
    name: 'tool',
    fields: {
      name: CelScalar.STRING,
      metadata: mapType(CelScalar.STRING, CelScalar.DYN),
      annotations: mapType(CelScalar.STRING, CelScalar.DYN),
    },
  };
  const REQUEST: RecordType = {
    kind: 'record',
    name: 'request',
    // The type the library's timestamp() returns, so `request.time > 5` is refused at load.
    fields: { protocolVersion: CelScalar.STRING, time: objectType('google.protobuf.Timestamp') },
  };
  const ANY = mapType(CelScalar.STRING, CelScalar.DYN);
  const RESOURCE: RecordType = { kind: 'record', name: 'resource', fields: { uri: CelScalar.STRING } };
  const PROMPT: RecordType = {
    kind: 'record',
    name: 'prompt',
    fields: { name: CelScalar.STRING, arguments: mapType(CelScalar.STRING, CelScalar.DYN) },
  };
  setup = {
    variables: {
      tool: { principal: PRINCIPAL, tool: TOOL, args: ANY, request: REQUEST },
      resource: { principal: PRINCIPAL, resource: RESOURCE, request: REQUEST },
      prompt: { principal: PRINCIPAL, prompt: PROMPT, request: REQUEST },
    },
    env: celEnv({
      variables: { principal: ANY, tool: ANY, args: ANY, request: ANY, resource: ANY, prompt: ANY },
      funcs: strings,
      re2,
    }),
  };
  return setup;
}

export interface ConditionInput {
  readonly principal: {
    readonly id: string;
    readonly scopes: Iterable<string>;
    /** anonymous, static, short_lived or one_time. */
    readonly credentialStrength: string;
    readonly claims?: Readonly<Record<string, unknown>>;
  };
  /** The tool of a tools/call; absent on the other surfaces, whose conditions cannot name it. */
  readonly tool?: { readonly name: string; readonly metadata: object; readonly annotations: unknown };
  /** The arguments as parsed, after schema validation. */
  readonly args?: unknown;
  readonly resource?: { readonly uri: string };
  readonly prompt?: { readonly name: string; readonly arguments: unknown };
  readonly request: { readonly protocolVersion: string | undefined; readonly timeMs: number };
}

/**
 * One request's variables, shared by every condition evaluated for it. Each
 * is converted on first use only, so a call whose conditions read only `args`
 * never converts the caller's claims.
 */
export interface ConditionBindings {
  readonly values: Record<string, CelInput>;
  /**
   * Some list or map holds more than MAX_ITERATIONS entries: conditions that
   * iterate refuse to run. Reading it converts every variable.
   */
  readonly oversized: boolean;
  /**
   * A variable read so far held an integer beyond int64, which CEL cannot
   * hold: the condition that read it fails rather than judge another number.
   */
  readonly unreadable: boolean;
}

export interface Condition {
  readonly source: string;
  /** True, false, or undefined when evaluation failed (which denies). */
  evaluate(bindings: ConditionBindings): boolean | undefined;
}

export type CompiledCondition =
  | { readonly ok: true; readonly condition: Condition }
  | { readonly ok: false; readonly message: string; readonly line: number; readonly column: number };

/** Rows from storage are compiled when first used; the same source is compiled once per surface. */
const compiled: Readonly<Record<ConditionSurface, BoundedMemo<CompiledCondition>>> = {
  tool: new BoundedMemo(4096),
  resource: new BoundedMemo(1024),
  prompt: new BoundedMemo(1024),
};

/** Compiles a condition for rows of one surface: a resource row's condition reading `tool` fails here, at load. */
export function compileCondition(source: string, surface: ConditionSurface = 'tool'): CompiledCondition {
  return compiled[surface].get(source, (s) => compile(s, surface));
}

function compile(source: string, surface: ConditionSurface): CompiledCondition {
  if (source.length > MAX_CONDITION_LENGTH) return failed(source, `longer than ${MAX_CONDITION_LENGTH} characters`, 0);
  const {
    cel: { parse, plan, isCelError },
  } = cel();
  const { env, variables } = celSetup();
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (e) {
    const at = (e as { location?: { start?: { offset?: unknown } } }).location?.start?.offset;
    const found = (e as { found?: unknown }).found;
    return failed(
      source,
      `syntax error${typeof found === 'string' ? ` near '${found.slice(0, 16)}'` : ''}`,
      typeof at === 'number' ? at : 0,
    );
  }
  const checked = checkCondition(env, parsed.expr, variables[surface]);
  const offsetOf = (id: bigint) => parsed.sourceInfo?.positions[id.toString()] ?? 0;
  if (!checked.ok) return failed(source, checked.message, offsetOf(checked.exprId));
  if (checked.nodes > MAX_CONDITION_NODES)
    return failed(source, `more than ${MAX_CONDITION_NODES} expression nodes`, 0);
  if (checked.cost > MAX_CONDITION_COST)
    return failed(
      source,
      `estimated cost ${checked.cost} is over the limit of ${MAX_CONDITION_COST} (iterations nest too deep or loop bodies are too large)`,
      0,
    );
  const run = plan(env, parsed);
  const iterates = checked.iterates;
  return {
    ok: true,
    condition: Object.freeze({
      source,
      evaluate(bindings: ConditionBindings): boolean | undefined {
        if (iterates && bindings.oversized) return undefined;
        try {
          const r = run(bindings.values as Parameters<typeof run>[0]);
          return typeof r === 'boolean' && !isCelError(r) && !bindings.unreadable ? r : undefined;
        } catch {
          return undefined;
        }
      },
    }),
  };
}

function failed(source: string, message: string, offset: number): CompiledCondition {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < source.length; i++) {
    if (source[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { ok: false, message, line, column: offset - lineStart + 1 };
}

/** What each surface's conditions may read: the variables, and each one's fields (undefined for a map of anything). */
export function declaredVariables(): Record<ConditionSurface, Record<string, readonly string[] | undefined>> {
  const { variables } = celSetup();
  return {
    tool: fieldNames(variables.tool),
    resource: fieldNames(variables.resource),
    prompt: fieldNames(variables.prompt),
  };
}

function fieldNames(
  declared: Readonly<Record<string, RecordType | CelType>>,
): Record<string, readonly string[] | undefined> {
  return Object.fromEntries(
    Object.entries(declared).map(([name, t]) => [name, isRecordType(t) ? Object.keys(t.fields) : undefined]),
  );
}

function isRecordType(t: RecordType | CelType): t is RecordType {
  return typeof t === 'object' && t !== null && (t as { kind?: unknown }).kind === 'record';
}

/**
 * Converts the request's variables to CEL values: JSON objects become maps,
 * whole numbers ints (so `args.count + 1` type-checks as it reads) and other
 * numbers doubles. Tool metadata and annotations are frozen per policy and
 * catalogue, so their conversions are kept.
 */
export function conditionBindings(input: ConditionInput): ConditionBindings {
  return new LazyBindings(input);
}

/** Getters on the prototype: CEL reads `values[name]`, and a variable no condition reads is never built. */
class LazyBindings implements ConditionBindings {
  readonly #input: ConditionInput;
  readonly #state: ConversionState = { oversized: false, unreadable: false };
  #principal: CelInput | undefined;
  #tool: CelInput | undefined;
  #args: CelInput | undefined;
  #request: CelInput | undefined;
  #resource: CelInput | undefined;
  #prompt: CelInput | undefined;

  constructor(input: ConditionInput) {
    this.#input = input;
  }

  get values(): Record<string, CelInput> {
    return this as unknown as Record<string, CelInput>;
  }

  get oversized(): boolean {
    void this.principal;
    void this.tool;
    void this.args;
    void this.prompt;
    return this.#state.oversized;
  }

  get unreadable(): boolean {
    return this.#state.unreadable;
  }

  get principal(): CelInput {
    const p = this.#input.principal;
    return (this.#principal ??= cel().cel.celMap(
      new Map<string, CelInput>([
        ['id', p.id],
        ['scopes', [...p.scopes].sort()],
        ['strength', p.credentialStrength],
        ['claims', toCel(p.claims ?? EMPTY_OBJECT, this.#state)],
      ]),
    ));
  }

  get tool(): CelInput {
    const t = this.#input.tool;
    return (this.#tool ??=
      t === undefined
        ? toCel(EMPTY_OBJECT, this.#state)
        : cel().cel.celMap(
            new Map<string, CelInput>([
              ['name', t.name],
              ['metadata', frozenToCel(t.metadata, this.#state)],
              ['annotations', frozenToCel(t.annotations ?? EMPTY_OBJECT, this.#state)],
            ]),
          ));
  }

  get resource(): CelInput {
    return (this.#resource ??= toCel(this.#input.resource ?? EMPTY_OBJECT, this.#state));
  }

  get prompt(): CelInput {
    const p = this.#input.prompt;
    return (this.#prompt ??=
      p === undefined
        ? toCel(EMPTY_OBJECT, this.#state)
        : cel().cel.celMap(
            new Map<string, CelInput>([
              ['name', p.name],
              ['arguments', toCel(p.arguments ?? EMPTY_OBJECT, this.#state)],
            ]),
          ));
  }

  get args(): CelInput {
    return (this.#args ??= toCel(this.#input.args ?? EMPTY_OBJECT, this.#state));
  }

  get request(): CelInput {
    const r = this.#input.request;
    return (this.#request ??= cel().cel.celMap(
      new Map<string, CelInput>([
        ['protocolVersion', r.protocolVersion ?? ''],
        ['time', cel().timestampFromMs(r.timeMs)],
      ]),
    ));
  }
}

interface ConversionState {
  oversized: boolean;
  /** A value no CEL type holds exactly (an integer beyond int64) was met: conditions reading it cannot be evaluated. */
  unreadable: boolean;
}

const EMPTY_OBJECT = Object.freeze({});
const frozenConversions = new WeakMap<object, { readonly value: CelInput } & Readonly<ConversionState>>();

function frozenToCel(v: unknown, state: ConversionState): CelInput {
  if (typeof v !== 'object' || v === null || !Object.isFrozen(v)) return toCel(v, state);
  let hit = frozenConversions.get(v);
  if (hit === undefined) {
    const own: ConversionState = { oversized: false, unreadable: false };
    hit = { value: toCel(v, own), ...own };
    frozenConversions.set(v, hit);
  }
  if (hit.oversized) state.oversized = true;
  if (hit.unreadable) state.unreadable = true;
  return hit.value;
}

function toCel(v: unknown, state: ConversionState): CelInput {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (typeof v === 'bigint') {
    // An integer read exactly (json/exact.ts): a CEL int when int64 holds it.
    if (v >= INT64_MIN && v <= INT64_MAX) return v;
    state.unreadable = true;
    return null;
  }
  if (typeof v === 'string' || typeof v === 'boolean' || v === null) return v;
  if (Array.isArray(v)) {
    if (v.length > MAX_ITERATIONS) state.oversized = true;
    return cel().cel.celList(v.map((x) => toCel(x, state)));
  }
  if (typeof v === 'object') {
    const entries = Object.entries(v);
    if (entries.length > MAX_ITERATIONS) state.oversized = true;
    return cel().cel.celMap(new Map(entries.map(([k, x]) => [k, toCel(x, state)] as const)));
  }
  return null;
}
