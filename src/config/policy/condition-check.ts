/**
 * Compile-time type checking of grant conditions. @bufbuild/cel 0.6 ships a
 * checker that is not exported and handles only identifiers and constants,
 * so toolgate checks the parsed expression itself against the declared
 * variables, resolving every call against the overloads the library's own
 * function registry declares. Pure and total: every problem comes back as a
 * message and the expression node it is about, never as an exception.
 */
import type { CelEnv, CelType, parse } from '@bufbuild/cel';
import { cel, type Cel } from './cel.ts';

type Expr = ReturnType<typeof parse>['expr'];

/** A variable whose fields are known: a misspelt field is a compile error. */
export interface RecordType {
  readonly kind: 'record';
  readonly name: string;
  readonly fields: Readonly<Record<string, CheckType>>;
}

export type CheckType = CelType | RecordType;

export type CheckResult =
  | { readonly ok: true; readonly nodes: number; readonly cost: number; readonly iterates: boolean }
  | { readonly ok: false; readonly message: string; readonly exprId: bigint };

/** Iterations charged per comprehension level in the cost estimate (and allowed per collection at run time). */
export const MAX_ITERATIONS = 1000;

// Bound when the first condition is checked, so that CEL loads only for a
// policy that has conditions (see cel.ts). Only checkCondition reads them.
let CelScalar!: Cel['cel']['CelScalar'];
let listType!: Cel['cel']['listType'];
let mapType!: Cel['cel']['mapType'];
let DYN!: Cel['cel']['CelScalar']['DYN'];
let BOOL!: Cel['cel']['CelScalar']['BOOL'];
let ANY_MAP!: CelType;

function bindCel(): void {
  if (ANY_MAP !== undefined) return;
  ({ CelScalar, listType, mapType } = cel().cel);
  DYN = CelScalar.DYN;
  BOOL = CelScalar.BOOL;
  ANY_MAP = mapType(CelScalar.STRING, DYN);
}

class CheckError {
  readonly message: string;
  readonly exprId: bigint;
  constructor(message: string, exprId: bigint) {
    this.message = message;
    this.exprId = exprId;
  }
}

/**
 * Infers the type of `expr` under `variables`; the result must be a bool (or
 * dyn, decided at run time). The cost is the node count with every node
 * inside a comprehension charged MAX_ITERATIONS times per nesting level.
 */
export function checkCondition(env: CelEnv, expr: Expr, variables: Readonly<Record<string, CheckType>>): CheckResult {
  bindCel();
  const state = { nodes: 0, cost: 0, iterates: false };
  try {
    const t = infer(env, expr, new Map(Object.entries(variables)), 1, state);
    if (!isDyn(t) && typeName(t) !== 'bool')
      throw new CheckError(`a condition must be a bool, this one is ${typeName(t)}`, expr.id);
  } catch (e) {
    if (e instanceof CheckError) return { ok: false, message: e.message, exprId: e.exprId };
    throw e;
  }
  return { ok: true, ...state };
}

type Scope = ReadonlyMap<string, CheckType>;

function infer(
  env: CelEnv,
  e: Expr,
  scope: Scope,
  weight: number,
  state: { nodes: number; cost: number; iterates: boolean },
): CheckType {
  state.nodes++;
  state.cost += weight;
  const sub = (x: Expr | undefined, s: Scope = scope, w = weight): CheckType =>
    x === undefined ? DYN : infer(env, x, s, w, state);
  const k = e.exprKind;
  switch (k.case) {
    case 'constExpr': {
      const c = k.value.constantKind;
      // The parser reads any run of digits; CEL's ints are 64-bit, and a literal beyond is a compile error.
      if (
        (c.case === 'int64Value' && (c.value < INT64_MIN || c.value > INT64_MAX)) ||
        (c.case === 'uint64Value' && c.value > UINT64_MAX)
      ) {
        throw new CheckError(
          `integer literal out of range: CEL ${c.case === 'int64Value' ? 'int is 64-bit signed' : 'uint is 64-bit'}`,
          e.id,
        );
      }
      return constantType(c.case);
    }
    case 'identExpr': {
      const t = scope.get(k.value.name);
      if (t === undefined) throw new CheckError(`undeclared reference to '${k.value.name}'`, e.id);
      return t;
    }
    case 'selectExpr': {
      const operand = sub(k.value.operand);
      const field = fieldOf(operand, k.value.field, e.id);
      return k.value.testOnly ? BOOL : field;
    }
    case 'listExpr': {
      const elems = k.value.elements.map((x) => sub(x));
      return listType(asCel(common(elems)));
    }
    case 'structExpr': {
      if (k.value.messageName !== '') throw new CheckError('message construction is not supported in conditions', e.id);
      for (const entry of k.value.entries) {
        if (entry.keyKind.case === 'mapKey') sub(entry.keyKind.value);
        sub(entry.value);
      }
      return mapType(DYN, DYN);
    }
    case 'comprehensionExpr': {
      const c = k.value;
      state.iterates = true;
      const range = sub(c.iterRange);
      const [first, second] = iterationTypes(range, e.id);
      const inner = weight * MAX_ITERATIONS;
      const accu = sub(c.accuInit);
      const loop = new Map(scope);
      loop.set(c.accuVar, accu);
      if (c.iterVar2 === '') loop.set(c.iterVar, second ?? first);
      else {
        loop.set(c.iterVar, first);
        loop.set(c.iterVar2, second ?? DYN);
      }
      sub(c.loopCondition, loop, inner);
      sub(c.loopStep, loop, inner);
      const done = new Map(scope);
      done.set(c.accuVar, accu);
      return sub(c.result, done);
    }
    case 'callExpr': {
      const call = k.value;
      const target = call.target === undefined ? undefined : sub(call.target);
      const args = call.args.map((x) => sub(x));
      return callType(
        env,
        call.function,
        target,
        args,
        e.id,
        call.args.map((x) => x.id),
      );
    }
    case undefined:
      throw new CheckError('unsupported expression', e.id);
  }
}

/** `argIds` place an error at the operand it is about, which reads better than the operator's position. */
function callType(
  env: CelEnv,
  name: string,
  target: CheckType | undefined,
  args: readonly CheckType[],
  id: bigint,
  argIds: readonly bigint[],
): CheckType {
  switch (name) {
    case '_&&_':
    case '_||_':
    case '@not_strictly_false':
      args.forEach((a, i) => {
        if (!isDyn(a) && typeName(a) !== 'bool')
          throw new CheckError(`'${operator(name)}' needs bool operands, got ${typeName(a)}`, argIds[i] ?? id);
      });
      return BOOL;
    case '_?_:_': {
      const [cond, yes, no] = args as [CheckType, CheckType, CheckType];
      if (!isDyn(cond) && typeName(cond) !== 'bool')
        throw new CheckError(`a conditional needs a bool, got ${typeName(cond)}`, argIds[0] ?? id);
      return common([yes, no]);
    }
    case '_==_':
    case '_!=_':
      comparable(name, args[0] as CheckType, args[1] as CheckType, id);
      return BOOL;
    case '@in': {
      const [item, range] = args as [CheckType, CheckType];
      if (!isDyn(range) && range.kind === 'list') comparable(name, item, range.element, argIds[0] ?? id);
      if (!isDyn(range) && range.kind === 'map') comparable(name, item, range.key, argIds[0] ?? id);
      break;
    }
    case '_[_]': {
      const [on, index] = args as [CheckType, CheckType];
      if (isDyn(on)) return DYN;
      if (on.kind === 'list') {
        if (!isDyn(index) && typeName(index) !== 'int' && typeName(index) !== 'uint')
          throw new CheckError(`a list index must be an int, got ${typeName(index)}`, argIds[1] ?? id);
        return on.element;
      }
      if (on.kind === 'map') return on.value;
      if (on.kind === 'record') return DYN;
      throw new CheckError(`type '${typeName(on)}' cannot be indexed`, id);
    }
  }
  const group = env.funcs.find(name);
  if (group === undefined) throw new CheckError(`undeclared function '${name}'`, id);
  const results: CelType[] = [];
  for (const f of group) {
    if ((f.target === undefined) !== (target === undefined)) continue;
    if (f.arguments.length !== args.length) continue;
    if (target !== undefined && !assignable(f.target as CelType, target)) continue;
    if (!f.arguments.every((p, i) => assignable(p, args[i] as CheckType))) continue;
    results.push(f.result);
  }
  if (results.length === 0) {
    const shown = `${target === undefined ? '' : `${typeName(target)}.`}(${args.map(typeName).join(', ')})`;
    throw new CheckError(`no matching overload for '${operator(name)}' applied to ${shown}`, id);
  }
  return common(results);
}

/**
 * The library declares equality on (dyn, dyn), so `request.time == 5` would
 * load and never hold. Two known types must be one type, or both numbers
 * (CEL compares int, uint and double across types).
 */
function comparable(name: string, a: CheckType, b: CheckType, id: bigint): void {
  if (isDyn(a) || isDyn(b) || typeName(a) === typeName(b)) return;
  if (NUMERIC.has(typeName(a)) && NUMERIC.has(typeName(b))) return;
  throw new CheckError(`'${operator(name)}' compares values of one type, got ${typeName(a)} and ${typeName(b)}`, id);
}

const NUMERIC: ReadonlySet<string> = new Set(['int', 'uint', 'double']);
/** What a CEL int holds: literals beyond are refused here, argument values beyond fail at run time (conditions.ts). */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

function fieldOf(t: CheckType, field: string, id: bigint): CheckType {
  if (isDyn(t)) return DYN;
  if (t.kind === 'record') {
    const f = Object.hasOwn(t.fields, field) ? t.fields[field] : undefined;
    if (f === undefined)
      throw new CheckError(`'${t.name}' has no field '${field}' (it has ${Object.keys(t.fields).join(', ')})`, id);
    return f;
  }
  if (t.kind === 'map') return t.value;
  throw new CheckError(`type '${typeName(t)}' has no fields`, id);
}

function iterationTypes(range: CheckType, id: bigint): [CheckType, CheckType | undefined] {
  if (isDyn(range)) return [DYN, undefined];
  if (range.kind === 'list') return [CelScalar.INT, range.element];
  if (range.kind === 'map') return [range.key, range.value];
  if (range.kind === 'record') return [CelScalar.STRING, DYN];
  throw new CheckError(`cannot iterate over '${typeName(range)}'`, id);
}

function assignable(param: CelType, arg: CheckType): boolean {
  if (isDyn(param) || isDyn(arg)) return true;
  const a = asCel(arg);
  if (param.kind === 'list' && a.kind === 'list') return assignable(param.element, a.element);
  if (param.kind === 'map' && a.kind === 'map') return assignable(param.key, a.key) && assignable(param.value, a.value);
  return param.kind === a.kind && param.name === a.name;
}

/** The one type every candidate has, else dyn. */
function common(types: readonly CheckType[]): CheckType {
  const [first, ...rest] = types;
  if (first === undefined) return DYN;
  return rest.every((t) => typeName(t) === typeName(first)) ? first : DYN;
}

function asCel(t: CheckType): CelType {
  return t.kind === 'record' ? ANY_MAP : t;
}

function isDyn(t: CheckType): boolean {
  return t.kind === 'scalar' && t.name === 'dyn';
}

function typeName(t: CheckType): string {
  return t.name;
}

function constantType(kind: string | undefined): CelType {
  switch (kind) {
    case 'boolValue':
      return CelScalar.BOOL;
    case 'int64Value':
      return CelScalar.INT;
    case 'uint64Value':
      return CelScalar.UINT;
    case 'doubleValue':
      return CelScalar.DOUBLE;
    case 'stringValue':
      return CelScalar.STRING;
    case 'bytesValue':
      return CelScalar.BYTES;
    case 'nullValue':
      return CelScalar.NULL;
    case undefined:
    default:
      return DYN;
  }
}

const OPERATORS: Readonly<Record<string, string>> = {
  '_&&_': '&&',
  '_||_': '||',
  '@not_strictly_false': '!',
  '!_': '!',
  '-_': '-',
  '_+_': '+',
  '_-_': '-',
  '_*_': '*',
  '_/_': '/',
  '_%_': '%',
  '_==_': '==',
  '_!=_': '!=',
  '_<_': '<',
  '_<=_': '<=',
  '_>_': '>',
  '_>=_': '>=',
  '@in': 'in',
};

function operator(name: string): string {
  return OPERATORS[name] ?? name;
}
