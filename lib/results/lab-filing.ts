/**
 * Which chart patient a partner's lab result files into, or that it is held for staff review
 * (docs/lab-results.md "Which patient a result files into", docs/fhir.md, docs/write-authority.md).
 * What a message says about the patient (a chart patient id, an MRN, a FHIR reference or
 * identifier) is evidence that names a patient, never authority to file:
 *
 *   filed  the named chart patient, when the sending partner has a holding relationship with it
 *          (mayFileForPatient: whatever the partner's patient access, `all` included) and the
 *          demographics the message carries, when it carries any, agree with the chart (the rule
 *          of HL7 intake, lib/intake/patient-resolution.ts demographicsAgree)
 *   held   otherwise: the result is stored under a held patient id (`hl7-...`, the form HL7 intake
 *          uses, which no chart read ever names) and a `lab-result` record is held for review in
 *          the chart table (GET /interopInbox/held, routed by lib/intake/held-route.ts)
 *
 * The sender's answer is the same in both cases; which one it was is for the audit trail and the
 * reviewers only. The held records are those of HL7 intake (lib/intake/held-records.ts, used as it
 * is); the reason `no-relationship` is added here (the chart patient exists, the partner has no
 * relationship with it).
 */
import { normaliseMrn } from '../chart/identifiers';
import type { Patient, PersonName } from '../chart/types';
import { heldIdFor, type ClaimedPerson, type HeldRecord } from '../intake/held-records';
import { patientIdFor } from '../intake/message-handlers';
import { identityKeyOf } from '../intake/partner-identities';
import { chartIdentifierKey, demographicsAgree } from '../intake/patient-resolution';
import { mayFileForPatient, type RelationshipLookup } from '../relationships/patient-access';
import type { ResultKeys } from './lookup-keys';
import type { LabResultFiling } from './receive';

/** Why a result is held: no chart patient named, the chart patient's demographics disagree, or the partner has no relationship with it. */
export type LabHoldReason = 'patient-unresolved' | 'demographics-differ' | 'no-relationship';

/** What the message says about the person besides the id (all optional). */
export interface ClaimedDemographics {
  name?: PersonName;
  /** YYYY-MM-DD */
  birthDate?: string;
}

/** A result files into `patientId`, or is held for `reason`. */
export type FilingDecision = { patientId: string; reason?: undefined } | { patientId?: undefined; reason: LabHoldReason };

export interface LabFilingDependencies {
  relationships: RelationshipLookup;
  chart: { getPatient(patientId: string): Promise<Patient | undefined> };
  /** the chart's MRN index (lib/intake/mrn-index.ts) */
  mrnIndex: { find(identifierKey: string): Promise<string | undefined> };
  keys(): Promise<ResultKeys>;
  /** the chart's own assigning authority, normalised (lib/keys/chart-authority.ts) */
  chartAuthority: string;
}

/**
 * The demographics the message carries agree with the chart: none carried agrees; a name (family and
 * given) is compared as HL7 intake compares PID-5 (with the birth date when there is one); a birth date
 * alone is compared exactly.
 */
export function carriedDemographicsAgree(chart: Patient, claimed: ClaimedDemographics): boolean {
  if (claimed.name) return demographicsAgree(chart, claimed, false);
  if (claimed.birthDate !== undefined) return chart.birthDate === claimed.birthDate;
  return true;
}

/** The decision for a chart patient already found (by identifier, MRN or a partner identity): relationship, then demographics. */
export async function filingForPatient(
  partnerId: string,
  patientId: string,
  claimed: ClaimedDemographics,
  deps: Pick<LabFilingDependencies, 'relationships' | 'chart'>,
  now: Date,
): Promise<FilingDecision> {
  if (!(await mayFileForPatient(partnerId, patientId, deps.relationships, now))) return { reason: 'no-relationship' };
  const patient = await deps.chart.getPatient(patientId);
  if (!patient) return { reason: 'patient-unresolved' };
  return carriedDemographicsAgree(patient, claimed) ? { patientId } : { reason: 'demographics-differ' };
}

/**
 * The decision for an id a message names the patient by (JSON `patientID`, a FHIR `Patient/<id>`):
 *
 *   1. a chart patient id the partner is related to (demographics checked);
 *   2. otherwise an MRN of the chart's own authority (the chart's MRN index): that chart patient, if related
 *      (demographics checked);
 *   3. otherwise held: `no-relationship` when the id is a chart patient's, else `patient-unresolved`.
 *
 * The relationship is asked before the chart patient is read, and an unrelated partner's request makes
 * the same reads whether or not the id is a chart patient's.
 */
export async function filingForNamedId(
  namedId: string,
  partnerId: string,
  claimed: ClaimedDemographics,
  deps: LabFilingDependencies,
  now: Date,
): Promise<FilingDecision> {
  if (await mayFileForPatient(partnerId, namedId, deps.relationships, now)) {
    const patient = await deps.chart.getPatient(namedId);
    if (patient) return carriedDemographicsAgree(patient, claimed) ? { patientId: namedId } : { reason: 'demographics-differ' };
  }
  const keys = await deps.keys();
  const byMrn = await deps.mrnIndex.find(chartIdentifierKey(keys, deps.chartAuthority, namedId));
  if (byMrn !== undefined && byMrn !== namedId) return filingForPatient(partnerId, byMrn, claimed, deps, now);
  // the reviewer is told whether the id named a chart patient at all (the sender never is)
  return { reason: (await deps.chart.getPatient(namedId)) ? 'no-relationship' : 'patient-unresolved' };
}

/**
 * The sender's identity key for an id it named the patient by, without an assigning authority: stable per
 * partner and id, so the results a partner sends under one id are held under one held patient id.
 */
export function namedIdIdentityKey(keys: ResultKeys, partnerId: string, namedId: string): string {
  return identityKeyOf(partnerId, keys.patientIdentifierKey('', normaliseMrn(namedId)));
}

/**
 * The patient id a held result is stored under: `hl7-` + 128 bits of the sender's keyed identity, the form
 * HL7 intake uses, which held routing recognises as not filed.
 */
export const heldPatientIdFor = patientIdFor;

/** The person of a held record: what the message said (the named id as an identifier without authority, name, birth date). */
export function claimedPersonOf(namedId: string, claimed: ClaimedDemographics): ClaimedPerson {
  return {
    ...(claimed.name ? { name: claimed.name } : {}),
    ...(claimed.birthDate ? { birthDate: claimed.birthDate } : {}),
    identifiers: [{ value: namedId, authority: '' }],
  };
}

export interface HeldLabResultInput {
  keys: ResultKeys;
  /** what the record is for besides the partner and the version: 'json', 'fhir' (a different hold for each path) */
  path: string;
  partnerId: string;
  sender: string;
  sourceMessageId: string;
  /** the version's receipt time (a resend of the same version holds the same record: its held id is the same) */
  receivedAt: string;
  versionId: string;
  resultId: string;
  identityKey: string;
  person: ClaimedPerson;
  reason: LabHoldReason;
}

/** The held `lab-result` record of one stored result version (lib/intake/held-records.ts HeldRecordHolder.hold). */
export function heldLabResultRecord(input: HeldLabResultInput): Omit<HeldRecord, 'state'> {
  const hash = input.keys.patientIdentifierKey('held', [`${input.path}-lab-result`, input.partnerId, input.versionId, input.identityKey].join('\u0000'));
  return {
    heldId: heldIdFor(input.receivedAt, hash),
    provenance: { partnerId: input.partnerId, sender: input.sender, sourceMessageId: input.sourceMessageId, receivedAt: input.receivedAt },
    person: input.person,
    body: { kind: 'lab-result', resultIds: [input.resultId] },
    // HeldRecord's reasons are HL7 intake's; `no-relationship` is one more, stored and listed as it is
    reason: input.reason as HeldRecord['reason'],
  };
}

/**
 * The filing of POST /receiveTestData (receive.ts `filing`): `patientID` and the optional
 * `data.patient` demographics decide (filingForNamedId); a held result is stored under the held
 * patient id and held for review.
 */
export function namedIdFiling(deps: LabFilingDependencies & { held: { hold(record: Omit<HeldRecord, 'state'>): Promise<boolean> } }): LabResultFiling {
  return {
    async decide(data, principal, now) {
      const claimed: ClaimedDemographics = {
        ...(data.patient?.name ? { name: { family: data.patient.name.family, given: data.patient.name.given } } : {}),
        ...(data.patient?.birthDate ? { birthDate: data.patient.birthDate } : {}),
      };
      const decision = await filingForNamedId(data.patientID, principal.partnerId, claimed, deps, now);
      if (decision.patientId !== undefined) return { patientID: decision.patientId };
      const keys = await deps.keys();
      const identityKey = namedIdIdentityKey(keys, principal.partnerId, data.patientID);
      return {
        patientID: heldPatientIdFor(identityKey),
        hold: async (version) =>
          heldLabResultRecord({
            keys,
            path: 'json',
            partnerId: principal.partnerId,
            sender: version.senderId,
            sourceMessageId: version.sourceMessageId ?? '',
            receivedAt: version.receivedAt,
            versionId: version.versionId,
            resultId: version.resultId,
            identityKey,
            person: claimedPersonOf(data.patientID, claimed),
            reason: decision.reason,
          }),
      };
    },
    hold: (record) => deps.held.hold(record),
  };
}
