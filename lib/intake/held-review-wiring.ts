/**
 * Wiring of the held-record endpoints from the environment: the review queue, partner identities and
 * chart patients and notes (chart table); the route of lab results also wires the result writer
 * (results table, KMS, documents bucket, notifier), built only when a lab result is routed.
 */
import { dynamoDbClient } from '../aws/clients';
import { tableName } from '../dynamo/table-names';
import { ChartRecordReader } from '../chart/chart-reader';
import { ChartNoteWriter } from '../chart/chart-note-writer';
import { HeldRecordStore } from './held-records';
import { PartnerIdentityStore } from './partner-identities';
import type { HeldLabResults, HeldReviewDependencies } from './held-review';
import { relationshipTable } from '../relationships/relationship-wiring';
import { relate, unrelate } from '../relationships/relationships';

/** The reads (list, get): chart table only. */
/** The chart patients a routed record may name (GetItem on the chart table, like the held records). */
export function routedChartReader(): ChartRecordReader {
  return new ChartRecordReader(dynamoDbClient(), tableName('chart'));
}

/** The held records alone (the held chart search reads one held record: no partner identities in its bundle). */
export function heldRecords(): HeldRecordStore {
  return new HeldRecordStore(dynamoDbClient(), tableName('chart'));
}

export function heldReadDependencies(): Pick<HeldReviewDependencies, 'held' | 'identities'> {
  return { held: heldRecords(), identities: new PartnerIdentityStore(dynamoDbClient(), tableName('chart')) };
}

/** The route: the chart's patients and notes (the note is written only if absent), and the lab result writer. */
export function heldRouteDependencies(labResults: () => HeldLabResults): HeldReviewDependencies {
  const db = dynamoDbClient();
  const chart = new ChartNoteWriter(db, tableName('chart'));
  return {
    ...heldReadDependencies(),
    chart: {
      getPatient: (patientId) => chart.getPatient(patientId),
      getNote: (patientId, noteId) => chart.getNote(patientId, noteId),
      putNoteIfAbsent: (note) => chart.putNoteIfAbsent(note),
    },
    relationships: {
      relate: (relationship, now) => relate(relationshipTable(), relationship, { now }),
      unrelate: (partnerId, patientId, endedBy, now) => unrelate(relationshipTable(), partnerId, patientId, endedBy, now),
    },
    labResults,
  };
}
