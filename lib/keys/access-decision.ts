import { Scopes, STAFF_ONLY_SCOPES, type Scope } from '../config/service';
import {
  hashApiKey,
  keyIdFromHash,
  keyIsUsable,
  partnerKind,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RATE_WINDOW_SECONDS,
  partnerPatientAccess,
  type Hl7Profile,
  type PatientAccess,
  type PartnerRecord,
} from './api-key';
import type { AccessRecords } from './access-records';
import type { SlidingWindowRateLimiter, RateLimitState } from './rate-limiter';

/** Who is calling, as the pipeline needs it downstream. Contains no secret. */
export interface Principal {
  keyId: string;
  partnerId: string;
  scopes: Scope[];
  allowedSenderIds: string[];
  /** the form sourceSystemIds the partner owns (absent in decisions encoded by older authorizers) */
  allowedFormSourceIds?: string[];
  /** the HL7 CX-4 assigning authorities the partner owns (absent in decisions encoded by older authorizers) */
  assigningAuthorities?: string[];
  receivingApplication?: string;
  receivingFacility?: string;
  hl7Profile?: Hl7Profile;
  /** the partner's IANA time zone for HL7 time stamps without an offset (absent: UTC; PartnerRecord.timeZone) */
  timeZone?: string;
  /**
   * which chart patients the partner may read (PartnerRecord.patientAccess); absent in decisions
   * encoded by older authorizers, read as `related` (fail closed: lib/relationships/patient-access.ts)
   */
  patientAccess?: PatientAccess;
  /** set when a signed-in staff member (not an API key) is calling: named in the audit trail */
  staff?: { subject: string; username: string };
}

/** Scopes a key or a staff member holds, with what they imply (reviewing the inbox implies reading it). */
export function effectiveScopes(scopes: readonly Scope[]): Scope[] {
  const out = new Set(scopes);
  if (out.has(Scopes.inboxReview)) out.add(Scopes.inboxRead);
  return [...out];
}

export const AccessOutcomes = {
  allow: 'allow',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  rateLimited: 'rate_limited',
} as const;
export type AccessOutcome = (typeof AccessOutcomes)[keyof typeof AccessOutcomes];

export interface AccessDecision {
  outcome: AccessOutcome;
  /** client-safe reason, e.g. "missing scope interop:export:hl7" */
  reason: string;
  principal?: Principal;
  rateLimit: RateLimitState;
}

export interface AccessRequest {
  /** every value of the x-api-key header the request carried */
  apiKeys: string[];
  sourceIp: string;
  /** the route's scope; a list is any-of (lib/config/routes.ts HttpRoute.scope) */
  requiredScope: Scope | readonly Scope[] | undefined;
  now: Date;
}

/** A route's required scope as a list (any-of); undefined: no route. */
export function requiredScopeList(required: Scope | readonly Scope[] | undefined): readonly Scope[] | undefined {
  return required === undefined ? undefined : typeof required === 'string' ? [required] : required;
}

/** How a missing scope is named: `interop:export:hl7`, or `interop:export:hl7 or interop:read:own-results` for an any-of route. */
export function scopeListText(required: readonly Scope[]): string {
  return required.join(' or ');
}

export interface AnonymousLimit {
  limit: number;
  windowSeconds: number;
}

/** Longest key we look at; anything longer is not one of ours and is not hashed. */
export const MAX_API_KEY_LENGTH = 256;
const printableAscii = /^[\x21-\x7e]+$/;

/**
 * The single access rule of the service, run by the authorizer for every request:
 * 1. no usable key (missing, repeated with different values, malformed, unknown, pending, revoked,
 *    past its rotation overlap)
 *    -> counted against the caller's address (anonymous limit) -> 429 past it, else 401;
 * 2. a known key -> counted against the key -> 429 past its limit;
 * 3. partner blocked by policy, key lacking the endpoint's scope (every one of them, for a route
 *    taking any of several), or a staff-only scope used by a key of a partner that is not
 *    `internal` (when that is the only scope of the route the key holds) -> 403;
 * 4. otherwise allow.
 * `deps.keys` may answer from the container's copy of a record (lib/keys/access-records.ts: at most
 * 10 s old, judged by `request.now`), so a key or partner change applies within that bound.
 */
export async function decideAccess(
  request: AccessRequest,
  deps: { keys: AccessRecords; limiter: SlidingWindowRateLimiter; anonymous: AnonymousLimit },
): Promise<AccessDecision> {
  const distinct = [...new Set(request.apiKeys.map((k) => k.trim()).filter((k) => k !== ''))];
  const anonymous = async (reason: string): Promise<AccessDecision> => {
    const rateLimit = await deps.limiter.hit(`anon#${request.sourceIp}`, deps.anonymous.limit, deps.anonymous.windowSeconds, request.now);
    return rateLimit.exceeded
      ? { outcome: AccessOutcomes.rateLimited, reason: 'anonymous rate limit exceeded', rateLimit }
      : { outcome: AccessOutcomes.unauthenticated, reason, rateLimit };
  };

  if (distinct.length === 0) return anonymous('x-api-key header is missing');
  if (distinct.length > 1) return anonymous('x-api-key header was sent more than once with different values');
  const secret = distinct[0]!;
  if (secret.length > MAX_API_KEY_LENGTH || !printableAscii.test(secret)) return anonymous('x-api-key is not a valid API key');

  const keyHash = hashApiKey(secret);
  const key = await deps.keys.getKey(keyHash, request.now);
  if (!key) return anonymous('x-api-key is not a valid API key');
  if (key.status === 'revoked') return anonymous('x-api-key has been revoked');
  // pending (a `keys create` that has not finished) is refused like an unknown key
  if (key.status !== 'active') return anonymous('x-api-key is not a valid API key');
  if (!keyIsUsable(key, request.now)) return anonymous('x-api-key has expired (replaced by a rotated key)');

  const partner: PartnerRecord | undefined = await deps.keys.getPartner(key.partnerId, request.now);
  const limit = key.rateLimit ?? partner?.rateLimit ?? DEFAULT_RATE_LIMIT;
  const windowSeconds = key.rateWindowSeconds ?? partner?.rateWindowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS;
  const rateLimit = await deps.limiter.hit(`key#${keyIdFromHash(keyHash)}`, limit, windowSeconds, request.now);

  const principal: Principal = {
    keyId: key.keyId,
    partnerId: key.partnerId,
    scopes: effectiveScopes(key.scopes),
    allowedSenderIds: partner?.allowedSenderIds ?? [],
    allowedFormSourceIds: partner?.allowedFormSourceIds ?? [],
    assigningAuthorities: partner?.assigningAuthorities ?? [],
    receivingApplication: partner?.receivingApplication,
    receivingFacility: partner?.receivingFacility,
    ...(partner?.hl7Profile ? { hl7Profile: partner.hl7Profile } : {}),
    ...(partner?.timeZone ? { timeZone: partner.timeZone } : {}),
    patientAccess: partnerPatientAccess(partner),
  };
  if (rateLimit.exceeded) return { outcome: AccessOutcomes.rateLimited, reason: 'rate limit exceeded for this API key', principal, rateLimit };
  if (!partner || partner.policy !== 'active')
    return { outcome: AccessOutcomes.forbidden, reason: 'the partner of this API key is blocked by policy', principal, rateLimit };
  const required = requiredScopeList(request.requiredScope);
  const granting = required?.filter((scope) => principal.scopes.includes(scope)) ?? [];
  if (required && required.length > 0 && granting.length === 0) {
    return { outcome: AccessOutcomes.forbidden, reason: `this API key lacks the scope ${scopeListText(required)}`, principal, rateLimit };
  }
  // a staff-only scope lets only an internal partner in; another scope of the route the key holds still may
  const staffOnlyGrant = granting.length > 0 && granting.every((scope) => STAFF_ONLY_SCOPES.includes(scope));
  if (staffOnlyGrant && partnerKind(partner) !== 'internal') {
    return {
      outcome: AccessOutcomes.forbidden,
      reason: `the scope ${granting[0]} is for the clinic's own staff; this API key's partner is not internal`,
      principal,
      rateLimit,
    };
  }
  if (!required || required.length === 0) return { outcome: AccessOutcomes.forbidden, reason: 'no such route', principal, rateLimit };
  return { outcome: AccessOutcomes.allow, reason: 'ok', principal, rateLimit };
}
