/**
 * Who may hear of a result (docs/webhooks.md, "Who receives which events"). Webhook events follow
 * read access, decided on the subscriber's standing NOW: at fan-out (so no delivery is made that
 * would be refused) and again before every attempt of a delivery (so a partner blocked, a key
 * revoked, a scope removed or a relationship ended while a delivery waits for its retry stops it).
 *
 *   subscriber partner unknown or blocked                     -> nothing
 *   the subscriber's own result (it sent the version)         -> with interop:read:own-results or an export scope
 *   another partner's result                                  -> only with an export scope, and only
 *     - a result filed to a chart patient (a held result, or one for a patient id the chart does
 *       not know, is its sender's alone: the lab result export answers 404 to everyone else), and
 *     - patient access `all`, or `related` with a relationship holding with that chart patient now
 *   ping (`webhooks test`)                                     -> any partner not blocked (it names no result)
 *
 * "Scopes" are the union over the partner's usable keys (active, not past a rotation's end): a
 * partner whose last key with a scope was revoked hears of nothing that scope gave it.
 *
 * A result with no chart patient yet is heard of by its sender only, never by an `all` partner:
 * nobody else can read it, and an event would tell them a held result exists. When staff file it
 * (`/interopInbox/held` route), the filed version is a new version with its own event, heard of
 * by everyone who may read the chart patient's results.
 */
import type { PartnerPolicy, PatientAccess } from '../keys/api-key';
import { Scopes, type Scope } from '../config/scopes';
import { patientReadReach, type RelationshipLookup } from '../relationships/patient-access';
import type { WebhookEvent } from './types';

/** What a subscriber partner may read now. */
export interface SubscriberStanding {
  policy: PartnerPolicy;
  patientAccess: PatientAccess;
  /** the union of the scopes of the partner's usable keys */
  scopes: ReadonlySet<Scope>;
}

/** The facts of a result version that decide its audience (plain ids and a flag, never PHI). */
export interface ResultAudienceFacts {
  /** the partner whose result version it is (who sent it); undefined: nobody's own */
  partnerId?: string | undefined;
  /** filed to a chart patient (the version's patientMatched) */
  filed: boolean;
}

export type AudienceRefusal =
  'partner-unknown' | 'partner-blocked' | 'no-read-scope' | 'not-own-result' | 'not-filed' | 'patient-not-related' | 'result-unknown';

export type AudienceVerdict = { allowed: true } | { allowed: false; reason: AudienceRefusal };

export interface AudienceDependencies {
  /** the subscriber's standing, undefined for a partner that does not exist (any more) */
  standing(partnerId: string): Promise<SubscriberStanding | undefined>;
  /** the chart patient id the version is filed to; read only when a `related` partner's reach decides */
  chartPatientOf(): Promise<string | undefined>;
  relationshipLookup: RelationshipLookup;
  now(): Date;
}

export const EXPORT_SCOPES: readonly Scope[] = [Scopes.exportHl7, Scopes.exportFhir];

const holdsAny = (scopes: ReadonlySet<Scope>, wanted: readonly Scope[]) => wanted.some((s) => scopes.has(s));

/** Whether the subscriber partner may receive a `ping` now (not blocked, still a partner). */
export async function mayReceivePing(subscriberPartnerId: string, deps: Pick<AudienceDependencies, 'standing'>): Promise<AudienceVerdict> {
  const standing = await deps.standing(subscriberPartnerId);
  if (!standing) return { allowed: false, reason: 'partner-unknown' };
  if (standing.policy === 'blocked') return { allowed: false, reason: 'partner-blocked' };
  return { allowed: true };
}

/** Whether the subscriber partner may hear of the result version now (the table above). */
export async function mayHearOfResult(subscriberPartnerId: string, result: ResultAudienceFacts, deps: AudienceDependencies): Promise<AudienceVerdict> {
  const standing = await deps.standing(subscriberPartnerId);
  if (!standing) return { allowed: false, reason: 'partner-unknown' };
  if (standing.policy === 'blocked') return { allowed: false, reason: 'partner-blocked' };
  const exporter = holdsAny(standing.scopes, EXPORT_SCOPES);
  if (result.partnerId !== undefined && result.partnerId === subscriberPartnerId) {
    return exporter || standing.scopes.has(Scopes.readOwnResults) ? { allowed: true } : { allowed: false, reason: 'no-read-scope' };
  }
  if (!exporter) return { allowed: false, reason: standing.scopes.has(Scopes.readOwnResults) ? 'not-own-result' : 'no-read-scope' };
  if (!result.filed) return { allowed: false, reason: 'not-filed' };
  if (standing.patientAccess === 'all') return { allowed: true };
  const patientId = await deps.chartPatientOf();
  if (patientId === undefined) return { allowed: false, reason: 'not-filed' };
  const reach = await patientReadReach(
    { partnerId: subscriberPartnerId, patientAccess: standing.patientAccess },
    patientId,
    deps.relationshipLookup,
    deps.now(),
  );
  return reach.allowed ? { allowed: true } : { allowed: false, reason: 'patient-not-related' };
}

/** Memoises one async lookup (a result's chart patient is read at most once per event). */
export function once<T>(read: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= read());
}

/** A result version as the audience rule reads it from the result store. */
export interface VersionAudience {
  facts: ResultAudienceFacts;
  /** the chart patient id, when filed */
  chartPatientId?: string;
}

/** What the rule reads, as the fan-out and the deliveries worker wire it. */
export interface AudienceSource extends Omit<AudienceDependencies, 'chartPatientOf'> {
  /** the version's audience facts and chart patient (a decrypting read of the result store); undefined for an unknown version */
  readVersion(resultId: string, versionId: string): Promise<VersionAudience | undefined>;
}

/**
 * Who may hear of one event: `verdictFor(partnerId)` for each subscriber. The facts are those the
 * notification (fan-out) or the delivery (worker) carries; without them (a delivery made before
 * they were recorded) they are read from the result store. The version is read at most once per event.
 */
export function eventAudience(
  event: WebhookEvent,
  facts: ResultAudienceFacts | undefined,
  source: AudienceSource,
): { verdictFor(subscriberPartnerId: string): Promise<AudienceVerdict> } {
  const { resultId, versionId } = event.data;
  const version = once(async () => (resultId && versionId ? source.readVersion(resultId, versionId) : undefined));
  const deps: AudienceDependencies = { ...source, chartPatientOf: async () => (await version())?.chartPatientId };
  return {
    async verdictFor(subscriberPartnerId) {
      if (event.type === 'ping') return mayReceivePing(subscriberPartnerId, source);
      const known = facts ?? (await version())?.facts;
      if (!known) return { allowed: false, reason: 'result-unknown' };
      return mayHearOfResult(subscriberPartnerId, known, deps);
    },
  };
}
