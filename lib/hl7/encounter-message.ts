import type { Encounter, Patient } from '../chart/types';
import { buildMessageHeader, encodeMessage, type MessageHeaderContext, ORU_R01 } from './header';
import { encounterObservationGroup, encounterOrderGroups, orderObservationSegments } from './observations';
import { Hl7Message } from './segment';
import { assertSamePatient, patientIdentificationSegment, visitSegments } from './segments';

/*
 * The encounter message is ORU^R01^ORU_R01, with or without orders.
 *
 * Why this structure: no v2.5.1 structure carries PV1 + PV2 + DG1 + ORC/OBR and stays valid for an
 * encounter both with and without orders (checked against every structure in the hl7-dictionary data):
 * - ADT_A01 (ADT^A08) has PV1, PV2 and DG1 but no ORC/OBR: the orders would be lost.
 * - ORM_O01 / OMG_O19 / OML_O21 carry DG1 and ORC/OBR but require at least one ORC, so an encounter
 *   without orders would need a second structure; and ORC-1 in an order message asks the receiver to
 *   act on the order (NW = new order), which a chart export must never do.
 * - DFT_P03 has all of them but requires FT1 (a charge) that the chart does not have.
 * - ORU_R01 is valid in both cases: PV1/PV2 in the VISIT group, one ORDER_OBSERVATION group for the
 *   encounter itself (so the message always has the OBR it requires), and one ORC/OBR group per order
 *   with ORC-1 RE (results/report, no action requested). ORU_R01 has no DG1 in v2.5.1, so each
 *   diagnosis is one CE OBX (OBX-3 DIAGNOSIS^Diagnosis^L, OBX-4 numbering them, OBX-5 CODE^TEXT^SYSTEM)
 *   in the encounter's group. The same layout is used for encounters in the patient summary.
 *
 *   MSH  ORU^R01^ORU_R01
 *   PID  core demographics
 *   PV1  PV1-2 class, PV1-3 location, PV1-7 attending, PV1-19 ENCOUNTER ID^^^^VN, PV1-44 admit, PV1-45 discharge
 *   PV2  PV2-3 admit reason (only when present)
 *   OBR  OBR-3 encounter id, OBR-4 ENCOUNTER^Encounter^L, OBR-7 admit, OBR-8 discharge, OBR-25 F once
 *        discharged, else P (final / working diagnoses, DG1-6 F / W in an ADT message)
 *   OBX  one per diagnosis, OBX-11 as OBR-25
 *   ORC  per order: ORC-1 RE, ORC-2 order id, ORC-5 status (table 0038, when it maps), ORC-9 ordered at,
 *        ORC-12 ordering provider
 *   OBR  per order: OBR-2 order id, OBR-4 order code, OBR-6 ordered at, OBR-16 ordering provider
 */

export interface EncounterMessageInput {
  header: MessageHeaderContext;
  patient: Patient;
  encounter: Encounter;
}

export function encodeEncounterMessage(input: EncounterMessageInput): string {
  const { header, patient, encounter } = input;
  assertSamePatient(patient, encounter.patientId, 'encounter.patientId');
  const groups = [
    encounterObservationGroup(encounter, { visitAsObservations: false, inputPath: 'encounter' }),
    ...encounterOrderGroups(encounter, 'encounter'),
  ];
  const message = new Hl7Message(buildMessageHeader(header, ORU_R01)).add(
    patientIdentificationSegment(patient, 'core'),
    ...visitSegments(encounter),
    ...orderObservationSegments(groups),
  );
  return encodeMessage(message, header);
}
