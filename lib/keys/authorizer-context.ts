import type { AccessDecision, AccessOutcome, Principal } from './access-decision';
import type { RateLimitState } from './rate-limiter';

/**
 * The decision travels from the authorizer to the handler in API Gateway's authorizer context,
 * which holds only flat string/number/boolean values. This module is the one codec for it.
 */
export type AuthorizerContext = Record<string, string | number | boolean>;

export function encodeDecision(decision: AccessDecision): AuthorizerContext {
  return {
    outcome: decision.outcome,
    reason: decision.reason,
    rlLimit: decision.rateLimit.limit,
    rlRemaining: decision.rateLimit.remaining,
    rlReset: decision.rateLimit.reset,
    principal: decision.principal ? JSON.stringify(decision.principal) : '',
  };
}

export function decodeDecision(context: Record<string, unknown> | null | undefined): AccessDecision | undefined {
  if (!context || typeof context.outcome !== 'string') return undefined;
  const num = (v: unknown) => (typeof v === 'number' ? v : Number(v));
  const rateLimit: RateLimitState = {
    limit: num(context.rlLimit),
    remaining: num(context.rlRemaining),
    reset: num(context.rlReset),
    exceeded: context.outcome === 'rate_limited',
  };
  if (![rateLimit.limit, rateLimit.remaining, rateLimit.reset].every(Number.isFinite)) return undefined;
  let principal: Principal | undefined;
  if (typeof context.principal === 'string' && context.principal !== '') {
    try {
      principal = JSON.parse(context.principal) as Principal;
    } catch {
      return undefined;
    }
  }
  return { outcome: context.outcome as AccessOutcome, reason: String(context.reason ?? ''), principal, rateLimit };
}
