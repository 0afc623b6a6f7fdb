/**
 * The route of a held record to a chart patient (docs/write-authority.md, "Held records"); the reads
 * and the errors are in held-review.ts. The writes come first, each idempotent for the same patient,
 * and markRouted is the last write: a failure in between leaves the record held and the same route
 * again completes it.
 */
import type { Note } from '../chart/types';
import { ConflictError, RecordNotFoundError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { receiveLabResult, type ReceiveDependencies } from '../results/receive';
import type { LabResultVersion } from '../results/types';
import type { HeldKind, HeldRecord } from './held-records';
import { HeldAlreadyRoutedError, HeldNoteConflictError, heldRecord, type HeldReviewDependencies } from './held-review';
import { sameDocument } from './same-document';

export interface RouteHeldInput {
  heldId: string;
  patientId: string;
  reviewer: Pick<Principal, 'keyId' | 'partnerId' | 'staff'>;
  requestId: string;
  now: Date;
}

export interface RouteHeldResult {
  heldId: string;
  kind: HeldKind;
  routedTo: string;
  /** document: the chart note's id; lab-result: the result ids filed under the patient */
  noteId?: string;
  resultIds?: string[];
}

/**
 * Routes a held record to a chart patient: HeldRecordNotFoundError, RecordNotFoundError (patient),
 * HeldAlreadyRoutedError, HeldNoteConflictError; a failure part way leaves it held (retry completes).
 */
export async function routeHeld(deps: HeldReviewDependencies, input: RouteHeldInput): Promise<RouteHeldResult> {
  const record = await heldRecord(deps, input.heldId);
  if (record.state === 'routed') throw new HeldAlreadyRoutedError(record.routedTo);
  if (!(await deps.chart.getPatient(input.patientId))) throw new RecordNotFoundError('patient', 'no patient with this patientId');
  const body = record.body;
  const result: RouteHeldResult = { heldId: record.heldId, kind: body.kind, routedTo: input.patientId };
  if (body.kind === 'document') {
    await fileNote(deps, { ...body.note, patientId: input.patientId });
    result.noteId = body.note.noteId;
  } else if (body.kind === 'identity') {
    if (!(await deps.identities.linkByStaff(body.identityKey, input.patientId))) throw new RecordNotFoundError('partner identity', 'the held identity is gone');
  } else {
    result.resultIds = await fileLabResults(deps, record, body.resultIds, input);
  }
  const routedBy = input.reviewer.staff?.username ?? input.reviewer.keyId;
  if (!(await deps.held.markRouted(record.heldId, input.patientId, routedBy, input.now))) {
    throw new HeldAlreadyRoutedError((await deps.held.get(record.heldId))?.routedTo);
  }
  return result;
}

/** The note into the chart; already there with the same content (an earlier try) is done, other content 409. */
async function fileNote(deps: HeldReviewDependencies, note: Note): Promise<void> {
  if (await deps.chart.putNoteIfAbsent(note)) return;
  const stored = await deps.chart.getNote(note.patientId, note.noteId);
  // the same document (times as instants, as MDM intake compares a resend) of the same partner
  const sameOwner = (stored?.provenance?.partnerId ?? null) === (note.provenance?.partnerId ?? null);
  if (!stored || !sameOwner || !sameDocument(stored, note)) throw new HeldNoteConflictError(note.noteId);
}

const NO_IDEMPOTENCY: ReceiveDependencies['idempotency'] = {
  begin: () => Promise.reject(new Error('routing held results sends no x-request-id')),
  complete: () => Promise.reject(new Error('routing held results sends no x-request-id')),
  release: () => Promise.reject(new Error('routing held results sends no x-request-id')),
};

/**
 * Each held result's current version, stored again for the chart patient through receiveLabResult
 * (validation, encryption, a new version, the current pointer, the notification), as the partner that
 * sent it (its partnerId, the sender of the message). The version id is derived from the content, so
 * a retry finds the version it stored and only makes sure it is current. A result whose current
 * version is already the patient's is done; one filed meanwhile under another chart patient is a
 * conflict (the reviewer looks again).
 */
async function fileLabResults(deps: HeldReviewDependencies, record: HeldRecord, resultIds: string[], input: RouteHeldInput): Promise<string[]> {
  if (!deps.labResults) throw new Error('routing held lab results needs the lab result services');
  const services = deps.labResults();
  const principal: Principal = {
    keyId: input.reviewer.keyId,
    partnerId: record.provenance.partnerId,
    scopes: [],
    allowedSenderIds: [record.provenance.sender],
  };
  for (const resultId of resultIds) {
    const current: LabResultVersion | undefined = await services.versions.readCurrent(resultId);
    if (!current) throw new RecordNotFoundError('lab result', 'a held lab result is gone');
    const patientID = current.submission.data.patientID;
    if (patientID === input.patientId) continue;
    if (!patientID.startsWith('hl7-'))
      throw new ConflictError('a held lab result has since been filed to a chart patient: nothing more was changed', { resultId });
    const outcome = await receiveLabResult(
      {
        body: { ...current.submission, data: { ...current.submission.data, patientID: input.patientId } },
        principal,
        requestId: input.requestId,
        requestIdSupplied: false,
        now: input.now,
      },
      { ...services, idempotency: NO_IDEMPOTENCY },
    );
    if (!outcome.body.current) throw new ConflictError('a newer version of a held lab result arrived meanwhile: route again', { resultId });
  }
  return resultIds;
}
