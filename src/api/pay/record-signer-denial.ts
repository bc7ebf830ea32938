/**
 * A payment the signer refused under the wallet's owner-signed policy (docs/adr/0012-owner-signed-policies.md),
 * answered like the API's own denial. By the time the SignerPolicyDenial arrives here the reservation it made
 * was given back (as for every signer failure); this records a `pd_…` decision with the signer's violations
 * and `decided_by = 'signer'` (./store/signer-denial-write.ts) and throws the 403 `policy_denied` every denial
 * answers — `decision_id`, `rule`, `rules`, `violations` — plus `decided_by: 'signer'` and the signed policy's
 * `policy_version`.
 *
 * Defends: a signer refusal answered as an unexplained error, or with no decision to look up; what this
 * process remembered of the wallet outliving the new audit row. Does not defend: a decision row that cannot be
 * written (the database is down): the refusal is answered all the same, with `decision_id: null`.
 */
import { formatUsd } from '../../../policy/money.js';
import type { Violation } from '../../../policy/policy-types.js';
import { AppError } from '../errors/app-error.js';
import type { SignerPolicyDenial } from '../signing/owner-policy-errors.js';
import type { PayDeps } from './pay-deps.js';
import type { CallContext, SpendPlan } from './pay-types.js';

export async function answerSignerDenial(
  deps: PayDeps,
  ctx: CallContext,
  plan: SpendPlan,
  denial: SignerPolicyDenial,
): Promise<never> {
  const version = denial.currentVersion;
  const violations: Violation[] = denial.violations.map((v) => ({
    ...v,
    message: `The wallet's owner-signed policy${version === null ? '' : ` (version ${version})`}, checked by the signer, refuses this payment (${v.rule}).`,
  }));
  const decisionId = deps.mint.id('pd_');
  const at = deps.clock();
  const recorded = await deps.writes
    .writeSignerDenial({
      id: decisionId,
      walletId: ctx.walletId,
      kind: plan.kind,
      amountMicro: plan.amountMicro,
      to: plan.to,
      capability: plan.capability ?? null,
      violations,
      policyVersion: version,
      actor: ctx.actor,
      amountUsd: formatUsd(plan.amountMicro),
      at,
    })
    .then(
      () => true,
      () => false,
    );
  // The audit row moved the wallet's chain head: what this process remembered of it is stale.
  deps.memory.forgetSnapshot(ctx.walletId);
  deps.metrics.payDecisions.inc({ kind: plan.kind, outcome: 'deny' });
  const rules = violations.map((v) => v.rule);
  throw new AppError('policy_denied', {
    message: violations.map((v) => v.message).join('; '),
    fields: {
      reason: 'policy_denied',
      decision_id: recorded ? decisionId : null,
      rule: rules[0],
      rules,
      violations,
      headroom: {},
      decided_by: 'signer',
      policy_version: version,
    },
    cause: denial,
  });
}
