import type { ErrorId } from '../errors.ts';
import type { SurfaceDecision } from '../grants/surfaces.ts';
import { deny, PASS, type Verdict } from './contract.ts';

/**
 * A resource or prompt decision as a verdict: the deciding row named, a
 * refusal by audit-mode rows (or a surface in audit mode) shadowed, and
 * audit-mode rows held beside an enforced refusal recorded. Undefined
 * decisions (the surface is not policed) pass.
 */
export function surfaceVerdict(d: SurfaceDecision | undefined, refusal: ErrorId): Verdict {
  if (d === undefined) return PASS;
  const rule = d.deciding[0]?.name;
  if (d.decision.effect === 'allow') return rule === undefined ? PASS : { kind: 'pass', rule };
  const first = d.decision.wouldDeny?.[0];
  return {
    ...deny(
      refusal,
      d.failed
        ? { reason: 'condition_error' }
        : d.deciding.some((r) => r.when !== undefined)
          ? { reason: 'condition' }
          : undefined,
    ),
    ...(d.audit && { audit: true as const }),
    ...(rule !== undefined && { rule }),
    ...(first !== undefined && { wouldDeny: { rule: first.name } }),
  };
}
