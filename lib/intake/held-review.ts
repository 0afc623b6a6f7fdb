/**
 * Staff review of the records HL7 intake held (docs/write-authority.md, "Held records"): list them,
 * read one, route one to a chart patient.
 *
 *   listHeld    held (or routed) records, oldest first (the queue order: the longest waiting first);
 *               a page is `limit` records, `nextCursor` the last held id of the page (held ids sort by
 *               receipt time). The list shows who the sender says the person is and a short
 *               description; never a note's text.
 *   getHeld     one record in full: the note (with its text), the result ids, or the partner's own
 *               view of the person (its latest demographics)
 *   routeHeld   files the record under a chart patient, then marks it routed:
 *                 document    the note written into the chart patient (putNoteIfAbsent)
 *                 identity    the partner identity linked to the patient by staff (linkByStaff): the
 *                             partner's later ORU/MDM for that person resolve to the patient
 *                 lab-result  each result's current version stored again (receiveLabResult) with the
 *                             chart patient's id: a new version under the same sender and partner,
 *                             which becomes the current one
 *               The writes come first and each is idempotent for the same patient; markRouted is the
 *               last write. A failure in between leaves the record held, and the same route again
 *               completes it. A record already routed answers 409 (HeldAlreadyRoutedError, routedTo).
 */
import type { Note, Patient } from '../chart/types';
import { ConflictError, InvalidParameterError, RecordNotFoundError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { receiveLabResult, type ReceiveDependencies } from '../results/receive';
import type { LabResultVersion } from '../results/types';
import { isHeldId, type ClaimedPerson, type HeldKind, type HeldRecord, type HeldRecordStore, type HeldState } from './held-records';
import type { PartnerDemographics, PartnerIdentityStore } from './partner-identities';

export const DEFAULT_HELD_LIMIT = 25;
export const MAX_HELD_LIMIT = 100;
export const HELD_STATES: readonly HeldState[] = ['held', 'routed'];

/** The one answer for an unknown held id (and for a malformed one). */
export class HeldRecordNotFoundError extends RecordNotFoundError {
  override readonly name = 'HeldRecordNotFoundError';
  constructor() {
    super('held record', 'no held record with this id');
  }
}

/** The record was routed before this request (by another reviewer, or by an earlier request). */
export class HeldAlreadyRoutedError extends ConflictError {
  override readonly name = 'HeldAlreadyRoutedError';
  constructor(routedTo?: string) {
    super('the held record has already been routed to a patient', { state: 'routed', ...(routedTo ? { routedTo } : {}) });
  }
}

/** The chart patient already has another note under the document's id: nothing was changed. */
export class HeldNoteConflictError extends ConflictError {
  override readonly name = 'HeldNoteConflictError';
  constructor(noteId: string) {
    super('the patient already has another note with this document id: nothing was changed', { noteId });
  }
}

export interface HeldDescription {
  /** document: the author and the time the document was written */
  author?: Note['author'];
  createdAt?: string;
  documentNumber?: string;
  /** lab-result: how many results are held */
  resultCount?: number;
}

export interface HeldSummary {
  heldId: string;
  kind: HeldKind;
  state: HeldState;
  reason: HeldRecord['reason'];
  receivedAt: string;
  partnerId: string;
  sender: string;
  person: ClaimedPerson;
  description: HeldDescription;
  routedTo?: string;
  routedAt?: string;
}

export interface HeldDetail extends HeldSummary {
  sourceMessageId: string;
  routedBy?: string;
  /** document: the note as the sender wrote it, text included */
  note?: Omit<Note, 'patientId'>;
  /** lab-result: the ids of the held results */
  resultIds?: string[];
  /** identity: the partner's latest view of the person */
  demographics?: PartnerDemographics;
}

export interface HeldReviewDependencies {
  held: Pick<HeldRecordStore, 'get' | 'list' | 'markRouted'>;
  identities: Pick<PartnerIdentityStore, 'get' | 'linkByStaff'>;
  chart: {
    getPatient(patientId: string): Promise<Patient | undefined>;
    getNote(patientId: string, noteId: string): Promise<Note | undefined>;
    putNoteIfAbsent(note: Note): Promise<boolean>;
  };
  /** only the route of lab results needs these (the results table, KMS, the notifier) */
  labResults?: () => HeldLabResults;
}

/** receiveLabResult's services without idempotency (a route sends no x-request-id of the partner's) */
export type HeldLabResults = Omit<ReceiveDependencies, 'idempotency'>;

function summaryOf(record: HeldRecord): HeldSummary {
  const body = record.body;
  const description: HeldDescription =
    body.kind === 'document'
      ? { author: body.note.author, createdAt: body.note.createdAt, ...(body.note.documentNumber ? { documentNumber: body.note.documentNumber } : {}) }
      : body.kind === 'lab-result'
        ? { resultCount: body.resultIds.length }
        : {};
  return {
    heldId: record.heldId,
    kind: body.kind,
    state: record.state,
    reason: record.reason,
    receivedAt: record.provenance.receivedAt,
    partnerId: record.provenance.partnerId,
    sender: record.provenance.sender,
    person: record.person,
    description,
    ...(record.routedTo ? { routedTo: record.routedTo } : {}),
    ...(record.routedAt ? { routedAt: record.routedAt } : {}),
  };
}

export interface HeldPage {
  items: HeldSummary[];
  nextCursor?: string;
}

/** A page of held records in a state, oldest first; `cursor` is the nextCursor of the previous page. */
export async function listHeld(deps: Pick<HeldReviewDependencies, 'held'>, options: { state: HeldState; limit: number; cursor?: string }): Promise<HeldPage> {
  if (options.cursor !== undefined && !isHeldId(options.cursor))
    throw new InvalidParameterError('cursor', 'is not a cursor returned by this list', 'cursor is not a cursor returned by this list');
  const found = await deps.held.list(options.state, options.limit + 1, options.cursor);
  const page = found.slice(0, options.limit);
  return { items: page.map(summaryOf), ...(found.length > options.limit ? { nextCursor: page[page.length - 1]!.heldId } : {}) };
}

async function heldRecord(deps: Pick<HeldReviewDependencies, 'held'>, heldId: string): Promise<HeldRecord> {
  const record = isHeldId(heldId) ? await deps.held.get(heldId) : undefined;
  if (!record) throw new HeldRecordNotFoundError();
  return record;
}

/** One held record in full (HeldRecordNotFoundError for an unknown id). */
export async function getHeld(deps: Pick<HeldReviewDependencies, 'held' | 'identities'>, heldId: string): Promise<HeldDetail> {
  const record = await heldRecord(deps, heldId);
  const body = record.body;
  const identity = body.kind === 'identity' ? await deps.identities.get(body.identityKey) : undefined;
  return {
    ...summaryOf(record),
    sourceMessageId: record.provenance.sourceMessageId,
    ...(record.routedBy ? { routedBy: record.routedBy } : {}),
    ...(body.kind === 'document' ? { note: body.note } : {}),
    ...(body.kind === 'lab-result' ? { resultIds: body.resultIds } : {}),
    ...(identity ? { demographics: identity.demographics } : {}),
  };
}

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

/** The content a resend of the same document carries (message-handlers' sameDocument, plus the owner). */
function documentContent(note: Note): string {
  return JSON.stringify([
    note.provenance?.partnerId ?? null,
    note.text,
    note.author,
    note.createdAt,
    note.completionStatus ?? null,
    note.authenticatedBy ?? null,
    note.authenticatedAt ?? null,
  ]);
}

/** The note into the chart; already there with the same content (an earlier try) is done, other content 409. */
async function fileNote(deps: HeldReviewDependencies, note: Note): Promise<void> {
  if (await deps.chart.putNoteIfAbsent(note)) return;
  const stored = await deps.chart.getNote(note.patientId, note.noteId);
  if (!stored || documentContent(stored) !== documentContent(note)) throw new HeldNoteConflictError(note.noteId);
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
    const current: LabResultVersion | undefined = await services.store.readCurrent(resultId);
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
