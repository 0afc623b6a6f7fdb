/**
 * What a partner's ADT^A01/A04/A08/A28/A31 says beside the person (issue 27 item 7): the visit (PV1),
 * the diagnoses (DG1) and the allergies (AL1). They are kept in the sender's own view of the person
 * (a partner identity, lib/intake/partner-identities.ts), never in the chart (docs/write-authority.md):
 *
 *   PV1  -> visits[]      visitNumber PV1-19 (CX-1), patientClass PV1-2, location PV1-3 (PL-1 point of care),
 *                         attending PV1-7, admitAt PV1-44, dischargeAt PV1-45 (times with their precision,
 *                         read in the partner's zone). Keyed by visit number: a later ADT for the same visit
 *                         number (or, without one, the earlier visit without one) replaces it, the others
 *                         are kept (at most MAX_VISITS, the oldest dropped). A PV1 with nothing but
 *                         patient class N (not applicable, as A28/A31 send it) is no visit.
 *   DG1  -> diagnoses[]   code DG1-3 (display from DG1-4 when DG1-3 has none), type DG1-6, at DG1-5
 *   AL1  -> allergies[]   allergen AL1-3, type AL1-2, severity AL1-4, reactions AL1-5 (one per repetition)
 *
 * DG1 and AL1 lists replace the earlier ones when the message carries any; a message without them
 * keeps the earlier ones. The content is checked by the record rules (checkPartnerAdtContentValues)
 * before anything is stored; a problem is answered AE at the field it came from.
 */
import { checkPartnerAdtContentValues, type RecordProblem } from '../chart/record-rules';
import type { PartnerAllergy, PartnerDiagnosis, PartnerVisit } from '../chart/types';
import type { ErrorLocation } from '../hl7/parse-error';
import { firstSegment, repetitionsOf, valueAt, type ParsedMessage, type ParsedSegment } from '../hl7/parser';
import { clinician, codedValue, compact, DEFAULT_TIME_ZONE, isTimeZone, partialFromTs, present } from './hl7-values';
import type { PartnerIdentity } from './partner-identities';

/** How many visits a partner identity keeps (the item stays far below DynamoDB's 400 KB). */
export const MAX_VISITS = 100;

export interface AdtContent {
  visit?: PartnerVisit;
  diagnoses?: PartnerDiagnosis[];
  allergies?: PartnerAllergy[];
}

/** A time with its precision; a value that is no time is kept as sent, so the record rules refuse it. */
function partialTime(segment: ParsedSegment, field: number, timeZone: string): string | undefined {
  const raw = present(valueAt(segment, field));
  return raw === undefined ? undefined : (partialFromTs(raw, timeZone) ?? raw);
}

function visitOf(pv1: ParsedSegment | undefined, timeZone: string): PartnerVisit | undefined {
  if (!pv1) return undefined;
  const visit = compact({
    visitNumber: present(valueAt(pv1, 19)),
    patientClass: present(valueAt(pv1, 2)),
    location: present(valueAt(pv1, 3)),
    attending: clinician(pv1.fields[7]?.[0]),
    admitAt: partialTime(pv1, 44, timeZone),
    dischargeAt: partialTime(pv1, 45, timeZone),
  });
  const keys = Object.keys(visit);
  if (keys.length === 0 || (keys.length === 1 && visit.patientClass === 'N')) return undefined;
  return visit;
}

function diagnosisOf(dg1: ParsedSegment, timeZone: string): PartnerDiagnosis {
  const coded = codedValue(dg1.fields[3]?.[0]);
  const description = present(valueAt(dg1, 4));
  const code = coded && !coded.display && description !== undefined ? { ...coded, display: description } : coded;
  // a DG1 without a code is stored as no diagnosis: the record rules answer it (DG1-3 required)
  return compact({ code: code!, type: present(valueAt(dg1, 6)), at: partialTime(dg1, 5, timeZone) });
}

function allergyOf(al1: ParsedSegment): PartnerAllergy {
  const reactions = repetitionsOf(al1, 5)
    .map((rep) => present(rep[0]?.[0]))
    .filter((r): r is string => r !== undefined);
  return compact({
    allergen: codedValue(al1.fields[3]?.[0])!,
    type: codedValue(al1.fields[2]?.[0]),
    severity: codedValue(al1.fields[4]?.[0]),
    reactions: reactions.length > 0 ? reactions : undefined,
  });
}

/** The visit, diagnoses and allergies of an ADT (pure; times without an offset in `timeZone`). */
export function adtContentFrom(message: ParsedMessage, timeZone: string = DEFAULT_TIME_ZONE): AdtContent {
  const zone = isTimeZone(timeZone) ? timeZone : DEFAULT_TIME_ZONE;
  const named = (name: string) => message.segments.filter((segment) => segment.name === name);
  const diagnoses = named('DG1').map((dg1) => diagnosisOf(dg1, zone));
  const allergies = named('AL1').map(allergyOf);
  return compact({
    visit: visitOf(firstSegment(message, 'PV1'), zone),
    diagnoses: diagnoses.length > 0 ? diagnoses : undefined,
    allergies: allergies.length > 0 ? allergies : undefined,
  });
}

const VISIT_FIELDS: Record<string, number> = { visitNumber: 19, patientClass: 2, location: 3, attending: 7, admitAt: 44, dischargeAt: 45 };
const DIAGNOSIS_FIELDS: Record<string, number> = { code: 3, type: 6, at: 5 };
const ALLERGY_FIELDS: Record<string, number> = { allergen: 3, type: 2, severity: 4, reactions: 5 };

/** A record-rule path of the ADT content -> the segment and field it came from. */
export function locateAdtContent(path: string): ErrorLocation {
  const [head, second, third, fourth] = path.split('.');
  if (head === 'visit') return { segmentId: 'PV1', segmentSequence: 1, field: VISIT_FIELDS[second ?? ''] ?? 1 };
  if (head === 'diagnoses' || head === 'allergies') {
    const segmentId = head === 'diagnoses' ? 'DG1' : 'AL1';
    const index = Number(second);
    const field = (head === 'diagnoses' ? DIAGNOSIS_FIELDS : ALLERGY_FIELDS)[third ?? ''] ?? 1;
    const repetition = third === 'reactions' && fourth !== undefined ? { fieldRepetition: Number(fourth) + 1 } : {};
    return { segmentId, segmentSequence: Number.isInteger(index) ? index + 1 : 1, field, ...repetition };
  }
  return { segmentId: 'PV1', segmentSequence: 1 };
}

/** The record-rule problems of the content (empty: it may be stored). */
export function adtContentProblems(content: AdtContent, now: Date): RecordProblem[] {
  return checkPartnerAdtContentValues(content, now);
}

/**
 * The partner identity's visits, diagnoses and allergies after this ADT: the visit replaces the one
 * with its visit number (appended when new), DG1/AL1 lists replace the earlier ones when present.
 */
export function withAdtContent(existing: Pick<PartnerIdentity, 'visits' | 'diagnoses' | 'allergies'> | undefined, content: AdtContent): AdtRecords {
  let visits = existing?.visits;
  if (content.visit) {
    const others = (visits ?? []).filter((visit) => visit.visitNumber !== content.visit!.visitNumber);
    visits = [...others, content.visit].slice(-MAX_VISITS);
  }
  return compact({ visits, diagnoses: content.diagnoses ?? existing?.diagnoses, allergies: content.allergies ?? existing?.allergies });
}

export type AdtRecords = Pick<PartnerIdentity, 'visits' | 'diagnoses' | 'allergies'>;
