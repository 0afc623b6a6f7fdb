/**
 * The route of a held record to a chart patient (docs/write-authority.md, "Held records"); the reads
 * and the errors are in held-review.ts. The writes come first, each idempotent for the same patient,
 * and markRouted is the last write: a failure in between leaves the record held and the same route
 * again completes it.
 *
 * Routing is a staff decision that the sending partner serves the patient: the first write relates
 * the partner to the patient (lib/relationships/relationships.ts relate; source `held-route`, purpose
 * TREAT, createdBy the staff username; a holding relationship is left as it is), so the partner's
 * later messages for the patient file without review and it may read what a related partner reads.
 * It comes before the record's own writes (whose filing asks for a relationship) and after the checks
 * that refuse the route (unknown record or patient, already routed); a failure later keeps it.
 *
 * The unlink of a routed identity (unlinkHeld) ends the staff link and puts the record back in the
 * queue (state held); the relationship stays unless the request ends it (`endRelationship`).
 */
import type { Note } from '../chart/types';
import { ConflictError, RecordNotFoundError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { receiveLabResult, type ReceiveDependencies } from '../results/receive';
import type { LabResultVersion } from '../results/types';
import type { HeldKind, HeldRecord } from './held-records';
import { HeldAlreadyRoutedError, HeldNoteConflictError, HeldNotUnlinkableError, heldRecord, type HeldReviewDependencies } from './held-review';
import { sameDocument } from './same-document';
import { DEFAULT_PURPOSE_OF_USE, type PartnerPatientRelationship } from '../relationships/relationships';

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
  /** the partner's relationship with the patient the route made (or found holding) */
  relationship?: Pick<PartnerPatientRelationship, 'partnerId' | 'patientId' | 'source'> & { created: boolean };
}

/** Who is reviewing, as records name them: the staff username, else the key id. */
function reviewerName(reviewer: RouteHeldInput['reviewer']): string {
  return reviewer.staff?.username ?? reviewer.keyId;
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
  const routedBy = reviewerName(input.reviewer);
  const made = await deps.relationships.relate(
    {
      partnerId: record.provenance.partnerId,
      patientId: input.patientId,
      purpose: DEFAULT_PURPOSE_OF_USE,
      source: 'held-route',
      since: input.now.toISOString(),
      createdBy: routedBy,
    },
    input.now,
  );
  result.relationship = {
    partnerId: made.relationship.partnerId,
    patientId: made.relationship.patientId,
    source: made.relationship.source,
    created: made.created,
  };
  if (body.kind === 'document') {
    await fileNote(deps, { ...body.note, patientId: input.patientId });
    result.noteId = body.note.noteId;
  } else if (body.kind === 'identity') {
    if (!(await deps.identities.linkByStaff(body.identityKey, input.patientId, { username: routedBy, at: input.now })))
      throw new RecordNotFoundError('partner identity', 'the held identity is gone');
  } else {
    result.resultIds = await fileLabResults(deps, record, body.resultIds, input);
  }
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
    const filedUnder = current.filedPatientId;
    if (filedUnder === input.patientId) continue;
    if (!filedUnder.startsWith('hl7-'))
      throw new ConflictError('a held lab result has since been filed to a chart patient: nothing more was changed', { resultId });
    const outcome = await receiveLabResult(
      {
        body: current.submission,
        fileInto: input.patientId,
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

export interface UnlinkHeldInput {
  heldId: string;
  /** also end the partner's relationship with the patient (kept otherwise: other records may rest on it) */
  endRelationship: boolean;
  reviewer: Pick<Principal, 'keyId' | 'partnerId' | 'staff'>;
  now: Date;
}

export interface UnlinkHeldResult {
  heldId: string;
  /** the patient the identity was linked to */
  unlinkedFrom: string;
  /** whether the partner's relationship with that patient was ended by this request */
  relationshipEnded: boolean;
}

/**
 * Ends the staff link of a routed partner identity: the identity no longer names the patient (the
 * partner's later messages for the person resolve as if never linked: the chart's MRN index, else
 * held), and the held record is back in the queue (state held) for a new decision. HeldRecordNotFoundError
 * for an unknown id; HeldNotUnlinkableError for a record that is not a routed identity, or whose
 * identity is no longer linked by staff to the patient it was routed to. The link goes first: a
 * failure before the record is back in the queue leaves it routed, and the same request again
 * completes it.
 */
export async function unlinkHeld(deps: HeldReviewDependencies, input: UnlinkHeldInput): Promise<UnlinkHeldResult> {
  const record = await heldRecord(deps, input.heldId);
  const body = record.body;
  if (body.kind !== 'identity')
    throw new HeldNotUnlinkableError('only a routed partner identity can be unlinked (a filed document or result stays in the chart)');
  if (record.state !== 'routed' || !record.routedTo) throw new HeldNotUnlinkableError('the held identity has not been routed: there is no link to end');
  const patientId = record.routedTo;
  const identity = await deps.identities.get(body.identityKey);
  const linkedHere = identity?.linkedBy === 'staff' && identity.linkedPatientId === patientId;
  if (linkedHere && !(await deps.identities.unlinkByStaff(body.identityKey, patientId))) {
    throw new HeldNotUnlinkableError('the partner identity changed meanwhile: read the record again');
  }
  if (!linkedHere && identity?.linkedPatientId === patientId) {
    // linked to the patient by matching (a later ADT that agreed with the chart): not a staff link to end
    throw new HeldNotUnlinkableError('the partner identity is linked by matching the chart, not by staff');
  }
  const by = reviewerName(input.reviewer);
  const ended = input.endRelationship ? await deps.relationships.unrelate(record.provenance.partnerId, patientId, by, input.now) : undefined;
  if (!(await deps.held.markUnlinked(record.heldId, patientId, by, input.now)))
    throw new HeldNotUnlinkableError('the held record changed meanwhile: read it again');
  return { heldId: record.heldId, unlinkedFrom: patientId, relationshipEnded: ended !== undefined };
}
