/**
 * Wiring of POST /receiveHl7 from the environment: the lab result services of POST /receiveTestData
 * (same store, keys, notifier), the chart, its MRN index, the match index, the idempotency table.
 */
import { Env } from '../config/service';
import { dynamoDbClient } from '../aws/clients';
import { optionalEnv } from '../aws/environment';
import { tableName } from '../dynamo/table-names';
import { ChartNoteWriter } from '../chart/chart-note-writer';
import { MrnIndex } from './mrn-index';
import type { ChartPatientIndex } from '../chart/chart-import';
import type { Patient } from '../chart/types';
import { intakeAuthorities } from './authority-wiring';
import { HeldRecordHolder } from './held-records';
import { PartnerIdentityStore } from './partner-identities';
import { chartIdentifierKey } from './patient-resolution';
import { IdempotencyStore } from '../results/idempotency';
import type { ResultKeys } from '../results/lookup-keys';
import { receiveDependencies } from '../results/result-wiring';
import { ChartMergeReviews } from './merge-reviews';
import { DocumentNumberRegister } from './document-numbers';
import { relationshipLookup } from '../relationships/relationship-wiring';
import type { ReceiveHl7Dependencies } from './receive-hl7';

export const DEFAULT_OWN_APPLICATION = 'INTEROP';
export const DEFAULT_OWN_FACILITY = 'INTEROP';

export function ownNames(): { ownApplication: string; ownFacility: string } {
  return {
    ownApplication: optionalEnv(Env.hl7SendingApplication, DEFAULT_OWN_APPLICATION),
    ownFacility: optionalEnv(Env.hl7SendingFacility, DEFAULT_OWN_FACILITY),
  };
}

export function receiveHl7Dependencies(): ReceiveHl7Dependencies {
  const db = dynamoDbClient();
  const chart = new ChartNoteWriter(db, tableName('chart'));
  const labResults = receiveDependencies();
  return {
    keys: labResults.keys,
    labResults,
    idempotency: new IdempotencyStore(db, tableName('idempotency')),
    mrnIndex: new MrnIndex(db, tableName('chart')),
    merges: new ChartMergeReviews(db, tableName('chart')),
    // intake reads chart patients and notes; it writes only partner notes, conditionally (docs/write-authority.md)
    chart: {
      getPatient: (patientId) => chart.getPatient(patientId),
      getNote: (patientId, noteId) => chart.getNote(patientId, noteId),
      putNoteIfAbsent: (note) => chart.putNoteIfAbsent(note),
      replacePartnerNote: (note, partnerId) => chart.replacePartnerNote(note, partnerId),
    },
    identities: new PartnerIdentityStore(db, tableName('chart')),
    held: new HeldRecordHolder(db, tableName('chart')),
    authorities: intakeAuthorities(db),
    // one GetItem of the partner's relationship with the patient named, before anything is filed
    relationships: relationshipLookup,
    documentNumbers: new DocumentNumberRegister(db, tableName('chart')),
  };
}

/**
 * Adds chart patients to the MRN index (the local stack's demo chart; a chart import). The first
 * patient to claim an (authority, MRN) keeps it. Returns the patients whose identifier another
 * patient already holds (a duplicate MRN in the chart: HL7 intake files under the first one).
 */
export async function indexPatientsByMrn(patients: readonly Patient[], keys: ResultKeys, index: MrnIndex, now: Date): Promise<string[]> {
  const conflicts: string[] = [];
  for (const patient of patients) {
    const holder = await index.claim(chartIdentifierKey(keys, patient.assigningAuthority ?? '', patient.mrn), patient.patientId, now);
    if (holder !== patient.patientId) conflicts.push(patient.patientId);
  }
  return conflicts;
}

/** The MRN index as one of the indexes the chart-patient writer keeps in step. */
export class MrnPatientIndex implements ChartPatientIndex {
  readonly name = 'MRN index (HL7 intake)';
  /** patients whose (authority, MRN) another patient holds, across every write */
  readonly conflicts: string[] = [];

  constructor(
    private readonly keys: () => Promise<ResultKeys>,
    private readonly index: MrnIndex,
  ) {}

  async indexPatients(patients: readonly Patient[], now: Date): Promise<void> {
    this.conflicts.push(...(await indexPatientsByMrn(patients, await this.keys(), this.index, now)));
  }
}
