/**
 * What the audit step of the HTTP pipeline (lib/http/middleware/audit-recording.ts) records for a
 * successful answer of a disclosing route: one disclosure per patient the answer concerned (the
 * audit event's patient and its related patients), and the partner's distinct-patient count of the
 * hour, with a warning line when it passes the stage's threshold (the CloudWatch alarm counts those
 * lines: infra/alarms.ts). Ids and counts only in the line; the disclosure records hold no PHI either.
 */
import type { AuditEvent } from '../audit/audit-trail';
import type { HttpRoute } from '../config/routes';
import type { Principal } from '../keys/access-decision';
import { logger } from '../observability/logger';
import { purposeOfDisclosure, type PatientReach } from '../relationships/patient-access';
import type { PurposeOfUse } from '../relationships/relationships';
import { disclosesPatientRecords } from './disclosing-routes';
import type { DisclosureRecord, PurposeSource } from './disclosure-log';

/** What the pipeline knows of a request when it writes its records. */
export interface DisclosedRequest {
  endpoint: Pick<HttpRoute, 'name' | 'method'>;
  requestId: string;
  now: Date;
  principal: Pick<Principal, 'partnerId' | 'keyId' | 'staff'>;
  auditEvent: AuditEvent;
  purposeOfUse?: PurposeOfUse;
  patientReach?: PatientReach & { patientId: string };
}

/** The disclosures of a successful request: none unless its route discloses and it named a patient. */
export function disclosuresOf(request: DisclosedRequest): DisclosureRecord[] {
  if (!disclosesPatientRecords(request.endpoint)) return [];
  const { auditEvent: event } = request;
  const patients = [...new Set([event.patientId, ...(event.relatedPatientIds ?? [])].filter((id): id is string => typeof id === 'string' && id !== ''))];
  return patients.map((patientId) => {
    // the gate's reach belongs to the patient it was asked for; another patient of the answer has only
    // the requested purpose or the default
    const reach: PatientReach = request.patientReach?.patientId === patientId ? request.patientReach : { allowed: true };
    const purposeOfUse = purposeOfDisclosure(request.purposeOfUse, reach);
    const purposeSource: PurposeSource = request.purposeOfUse ? 'requested' : reach.relationship ? 'relationship' : 'default';
    return {
      at: request.now.toISOString(),
      requestId: request.requestId,
      partnerId: request.principal.partnerId,
      keyId: request.principal.keyId,
      ...(request.principal.staff?.username ? { staffUsername: request.principal.staff.username } : {}),
      patientId,
      endpoint: request.endpoint.name,
      action: event.action,
      ...(event.resourceIds ? { resourceIds: event.resourceIds } : {}),
      purposeOfUse,
      purposeSource,
    };
  });
}

/** The log line a partner's distinct patients of the hour above the threshold writes (the alarm's metric filter matches it). */
export const PATIENT_READS_OVER_THRESHOLD_EVENT = 'disclosure.patient_reads_over_threshold';

/** Writes the warning line when `count` (distinct patients this hour, after this request) is above `threshold`. */
export function reportPatientReadVolume(partnerId: string, count: number | undefined, threshold: number, requestId: string): boolean {
  if (count === undefined || count <= threshold) return false;
  logger.warn(PATIENT_READS_OVER_THRESHOLD_EVENT, { requestId, partnerId, count, reason: `more than ${threshold} distinct patients this hour` });
  return true;
}
