import type { ConditionSurface } from './conditions.ts';

/** One variable a condition may read: the rows whose conditions may name it, and what it holds. */
export interface ConditionVariable {
  readonly name: string;
  readonly surfaces: readonly ConditionSurface[];
  /** Its fields, as conditions.ts declares them to CEL; undefined for a map of anything (`args`). */
  readonly fields: readonly string[] | undefined;
  readonly doc: string;
}

const EVERY: readonly ConditionSurface[] = ['tool', 'resource', 'prompt'];

/**
 * The variables of conditions, for people: the README's table is generated
 * from this, and a test holds it equal to the CEL declarations in
 * conditions.ts, so neither can gain a variable or field the other lacks.
 */
export const CONDITION_VARIABLES: readonly ConditionVariable[] = [
  {
    name: 'principal',
    surfaces: EVERY,
    fields: ['id', 'scopes', 'strength', 'claims'],
    doc: '`id`, `scopes` (list, sorted), `strength` (`anonymous`, `static`, `short_lived`, `one_time`), `claims` (the verified JWT payload; empty for other credentials)',
  },
  {
    name: 'tool',
    surfaces: ['tool'],
    fields: ['name', 'metadata', 'annotations'],
    doc: "`name`, `metadata` (the policy's tool metadata: `tier`, `sideEffect`, `securityLevel`, `requiredScopes`, …), `annotations` (the server's)",
  },
  {
    name: 'args',
    surfaces: ['tool'],
    fields: undefined,
    doc: "the call's arguments as parsed, after schema validation; whole numbers are `int`, others `double`. An integer beyond ±2^53 is read with its digits, exactly as the server reads it; one beyond the 64-bit range of a CEL `int` makes any condition that reads `args` fail (a deny row applies, an allow row does not, `condition_error`)",
  },
  {
    name: 'resource',
    surfaces: ['resource'],
    fields: ['uri'],
    doc: '`uri`: the resource a `resources/read` or `resources/subscribe` names',
  },
  {
    name: 'prompt',
    surfaces: ['prompt'],
    fields: ['name', 'arguments'],
    doc: '`name`, `arguments` (a map of strings, as `prompts/get` sends them)',
  },
  {
    name: 'request',
    surfaces: EVERY,
    fields: ['protocolVersion', 'time'],
    doc: '`protocolVersion`, `time` (a `google.protobuf.Timestamp`: compare it with `timestamp("…")`, take `getHours()` and the like)',
  },
];
