import type { ContractsConfig } from '../../config/policy/policy.ts';
import type { Catalogue, CatalogueTool } from '../catalogue.ts';
import { hasHigh, type Finding } from '../lint/lint.ts';
import { changedFields, type FieldChange } from './diff.ts';
import type { Pin } from './pins.ts';

export type QuarantineReason = 'drift' | 'unknown' | 'lint';

/** Where one tool's contract stands against what is approved for it. */
export interface Assessment {
  readonly name: string;
  readonly digest: string;
  /** `unknown`: no pin and no policy digest names the tool. */
  readonly status: 'approved' | 'drifted' | 'unknown';
  /** Every approved digest: the policy's, then the stored pin's. */
  readonly approved: readonly string[];
  /** For drift: what changed against the last approved contract toolgate knows (absent when it knows none). */
  readonly changes?: readonly FieldChange[];
  readonly findings: readonly Finding[];
  readonly quarantine?: QuarantineReason;
}

export interface AssessInput {
  readonly catalogue: Catalogue;
  readonly config: ContractsConfig;
  readonly pins: ReadonlyMap<string, Pin>;
  /** The last contract seen with an approved digest, per tool (what a policy-only pin is compared with). */
  readonly lastApproved: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  readonly lint: (tool: CatalogueTool) => readonly Finding[];
}

/**
 * Pure: the assessment of every catalogue tool. A tool is quarantined in
 * enforce mode when its digest is not approved, or when no pin names it and
 * unknown tools are quarantined; with `lint: enforce`, also when a
 * high-severity finding is on a contract no operator vouched for (a policy
 * digest or an operator's approval vouches; a first-seen pin does not).
 */
export function assess(input: AssessInput): Map<string, Assessment> {
  const { catalogue, config, pins, lastApproved } = input;
  const out = new Map<string, Assessment>();
  for (const tool of catalogue.tools.values()) {
    const fromPolicy = Object.hasOwn(config.tools, tool.name) ? (config.tools[tool.name] as readonly string[]) : [];
    const pin = pins.get(tool.name);
    const approved = pin === undefined || fromPolicy.includes(pin.digest) ? fromPolicy : [...fromPolicy, pin.digest];
    const status = approved.length === 0 ? 'unknown' : approved.includes(tool.digest) ? 'approved' : 'drifted';
    const findings = config.lint === 'off' ? [] : input.lint(tool);
    const reference =
      pin?.digest !== tool.digest && pin?.contract !== undefined ? pin.contract : lastApproved.get(tool.name);
    const changes = status === 'drifted' && reference !== undefined ? changedFields(reference, tool.tool) : undefined;
    const vouched = fromPolicy.includes(tool.digest) || (pin?.by === 'operator' && pin.digest === tool.digest);
    let quarantine: QuarantineReason | undefined;
    if (config.mode === 'enforce' && status === 'drifted') quarantine = 'drift';
    else if (config.mode === 'enforce' && status === 'unknown' && config.unknownTools === 'quarantine')
      quarantine = 'unknown';
    else if (config.lint === 'enforce' && !vouched && hasHigh(findings)) quarantine = 'lint';
    out.set(tool.name, {
      name: tool.name,
      digest: tool.digest,
      status,
      approved,
      findings,
      ...(changes !== undefined && { changes }),
      ...(quarantine !== undefined && { quarantine }),
    });
  }
  return out;
}
