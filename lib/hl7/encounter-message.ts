import type { Encounter, Patient } from '../chart/types';
import { ceFromCodedValue } from './datatypes';
import { escapeText } from './escape';
import { ADT_A08, buildMessageHeader, encodeMessage, type MessageHeaderContext, namespacesOf, ORU_R01 } from './header';
import type { IdentifierNamespaces } from './identifiers';
import { encounterObservationGroup, encounterOrderGroups, orderObservationSegments } from './observations';
import { Hl7Message, Segment } from './segment';
import { assertSamePatient, eventTypeSegment, patientIdentificationSegment, requireComponents, tsFromChartTime, visitSegments } from './segments';
import { DIAGNOSIS_TYPE_FINAL, DIAGNOSIS_TYPE_WORKING } from './tables';

/*
 * The encounter message, in one of two styles chosen per partner (`hl7Profile.encounterStyle`).
 *
 * `adt` (the default): ADT^A08^ADT_A01, the structure receivers file visits and their diagnoses from.
 *   MSH  ADT^A08^ADT_A01
 *   EVN  EVN-1 A08, EVN-2 message time
 *   PID  full demographics
 *   PV1  PV1-2 class, PV1-3 location, PV1-7 attending, PV1-19 visit number, PV1-44 admit, PV1-45 discharge
 *   PV2  PV2-3 admit reason (only when present)
 *   DG1  one per diagnosis: DG1-1 set id, DG1-3 CODE^TEXT^SYSTEM, DG1-5 the admit time, DG1-6 diagnosis
 *        type (table 0052): F (final) once discharged, else W (working)
 *   (PR1 would follow per procedure; the chart holds no procedures. ADT_A01 has no segment for orders:
 *   the encounter's orders travel in the patient summary, as ORU^R01 groups of their own, or in this
 *   message with the `oru` style.)
 *
 * `oru`: ORU^R01^ORU_R01, valid with and without orders:
 *   MSH  ORU^R01^ORU_R01
 *   PID  core demographics
 *   PV1  [PV2]  as above (the VISIT group)
 *   OBR  OBR-3 encounter id, OBR-4 ENCOUNTER^Encounter^L, OBR-7 admit, OBR-8 discharge, OBR-25 F once
 *        discharged, else P; OBX one CE per diagnosis, OBX-11 as OBR-25
 *   ORC  per order: ORC-1 SC (status changed: the chart holds no results of orders, so none follow),
 *        ORC-2 order id, ORC-5 status (table 0038), ORC-9 ordered at, ORC-12 ordering provider
 *   OBR  per order: OBR-2 order id, OBR-4 order code, OBR-6 and OBR-7 ordered at (admit time when the
 *        order has none), OBR-16 ordering provider, OBR-25 X/S/I/O (no results available, and why)
 */

export type EncounterStyle = 'adt' | 'oru';

export interface EncounterMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
  encounter: Encounter;
  /** default `adt` */
  style?: EncounterStyle;
}

/** One DG1 per diagnosis of the encounter (DG1-6 F once discharged, else W). */
export function diagnosisSegments(encounter: Encounter, inputPath: string): Segment[] {
  const type = encounter.dischargeAt ? DIAGNOSIS_TYPE_FINAL : DIAGNOSIS_TYPE_WORKING;
  return (encounter.diagnoses ?? []).map((diagnosis, index) =>
    new Segment('DG1')
      .set(1, escapeText(String(index + 1)))
      .set(3, requireComponents(ceFromCodedValue(diagnosis), `${inputPath}.diagnoses[${index}]`))
      .set(5, tsFromChartTime(encounter.admitAt, `${inputPath}.admitAt`))
      .set(6, escapeText(type)),
  );
}

/** The segments of the ADT^A08 encounter message after MSH (EVN PID PV1 [PV2] {DG1}). */
export function encounterAdtSegments(patient: Patient, encounter: Encounter, recordedAt: Date, namespaces: IdentifierNamespaces, inputPath: string): Segment[] {
  return [
    eventTypeSegment('A08', recordedAt),
    patientIdentificationSegment(patient, 'full'),
    ...visitSegments(encounter, namespaces),
    ...diagnosisSegments(encounter, inputPath),
  ];
}

export function encodeEncounterMessage(input: EncounterMessageInput): string {
  const { header, patient, encounter } = input;
  assertSamePatient(patient, encounter.patientId, 'encounter.patientId');
  const namespaces = namespacesOf(header);
  if ((input.style ?? 'adt') === 'adt') {
    const message = new Hl7Message(buildMessageHeader(header, ADT_A08)).addAll(
      encounterAdtSegments(patient, encounter, header.timestamp, namespaces, 'encounter'),
    );
    return encodeMessage(message, header);
  }
  const groups = [encounterObservationGroup(encounter, { namespaces, inputPath: 'encounter' }), ...encounterOrderGroups(encounter, 'encounter')];
  const message = new Hl7Message(buildMessageHeader(header, ORU_R01)).add(
    patientIdentificationSegment(patient, 'core'),
    ...visitSegments(encounter, namespaces),
    ...orderObservationSegments(groups, namespaces),
  );
  return encodeMessage(message, header);
}
