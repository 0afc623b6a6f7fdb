/**
 * The access rule for signed-in staff (the inbox page), beside the API-key rule of
 * access-decision.ts: a valid staff ID token -> counted against the staff member's own limit ->
 * scopes from group membership (everyone: read the inbox; group interop-reviewers: route) -> 403
 * when the route needs a scope the member lacks. An invalid or expired token is a 401 counted
 * against the caller's address, exactly like an unknown API key.
 */
import { createHash } from 'node:crypto';
import { Scopes, type Scope } from '../config/service';
import { AccessOutcomes, effectiveScopes, requiredScopeList, scopeListText, type AccessDecision, type AnonymousLimit, type Principal } from './access-decision';
import type { SlidingWindowRateLimiter } from './rate-limiter';
import { REVIEWER_GROUP, StaffTokenInvalidError, type StaffIdentity, type StaffTokenVerifier } from './staff-token';

/** Partner id under which staff requests are recorded (the clinic's own people; kind internal). */
export const STAFF_PARTNER_ID = 'clinic-staff';
export const STAFF_RATE_LIMIT = { limit: 600, windowSeconds: 60 } as const;
/** Longest bearer token looked at; Cognito ID tokens are ~1-2 KB. */
export const MAX_BEARER_TOKEN_LENGTH = 8192;

export function staffScopes(identity: StaffIdentity): Scope[] {
  return effectiveScopes(identity.groups.includes(REVIEWER_GROUP) ? [Scopes.inboxReview] : [Scopes.inboxRead]);
}

/** A stable, log-safe id for a staff member (like keyId for keys). */
export function staffKeyId(subject: string): string {
  return `staff_${createHash('sha256').update(subject, 'utf8').digest('hex').slice(0, 12)}`;
}

export interface StaffAccessRequest {
  bearerToken: string;
  sourceIp: string;
  /** the route's scope; a list is any-of */
  requiredScope: Scope | readonly Scope[] | undefined;
  now: Date;
}

export async function decideStaffAccess(
  request: StaffAccessRequest,
  deps: { verifier: StaffTokenVerifier | undefined; limiter: SlidingWindowRateLimiter; anonymous: AnonymousLimit },
): Promise<AccessDecision> {
  const refuse = async (reason: string): Promise<AccessDecision> => {
    const rateLimit = await deps.limiter.hit(`anon#${request.sourceIp}`, deps.anonymous.limit, deps.anonymous.windowSeconds, request.now);
    return rateLimit.exceeded
      ? { outcome: AccessOutcomes.rateLimited, reason: 'anonymous rate limit exceeded', rateLimit }
      : { outcome: AccessOutcomes.unauthenticated, reason, rateLimit };
  };
  if (!deps.verifier) return refuse('staff sign-in is not configured on this stage');
  if (request.bearerToken.length > MAX_BEARER_TOKEN_LENGTH) return refuse('the bearer token is not a valid staff ID token');
  let identity: StaffIdentity;
  try {
    identity = await deps.verifier.verify(request.bearerToken);
  } catch (error) {
    if (error instanceof StaffTokenInvalidError) return refuse(error.message);
    throw error;
  }
  const keyId = staffKeyId(identity.subject);
  const rateLimit = await deps.limiter.hit(`staff#${keyId}`, STAFF_RATE_LIMIT.limit, STAFF_RATE_LIMIT.windowSeconds, request.now);
  const principal: Principal = {
    keyId,
    partnerId: STAFF_PARTNER_ID,
    scopes: staffScopes(identity),
    allowedSenderIds: [],
    // the clinic's own reviewers: the inbox shows every partner's records for every chart patient
    patientAccess: 'all',
    staff: { subject: identity.subject, username: identity.username },
  };
  if (rateLimit.exceeded) return { outcome: AccessOutcomes.rateLimited, reason: 'rate limit exceeded for this staff member', principal, rateLimit };
  const required = requiredScopeList(request.requiredScope);
  if (!required || required.length === 0) return { outcome: AccessOutcomes.forbidden, reason: 'no such route', principal, rateLimit };
  if (!required.some((scope) => principal.scopes.includes(scope))) {
    const reason = required.includes(Scopes.inboxReview)
      ? `routing a packet needs membership of the group ${REVIEWER_GROUP}`
      : `staff sign-in does not grant the scope ${scopeListText(required)}`;
    return { outcome: AccessOutcomes.forbidden, reason, principal, rateLimit };
  }
  return { outcome: AccessOutcomes.allow, reason: 'ok', principal, rateLimit };
}

/** Anonymous routes (the staff page's static document): counted against the caller's address only. */
export async function decideAnonymousRoute(
  request: { sourceIp: string; now: Date },
  deps: { limiter: SlidingWindowRateLimiter; anonymous: AnonymousLimit },
): Promise<AccessDecision> {
  const rateLimit = await deps.limiter.hit(`anon#${request.sourceIp}`, deps.anonymous.limit, deps.anonymous.windowSeconds, request.now);
  const principal: Principal = { keyId: 'anonymous', partnerId: 'anonymous', scopes: [], allowedSenderIds: [] };
  return rateLimit.exceeded
    ? { outcome: AccessOutcomes.rateLimited, reason: 'anonymous rate limit exceeded', principal, rateLimit }
    : { outcome: AccessOutcomes.allow, reason: 'ok', principal, rateLimit };
}
