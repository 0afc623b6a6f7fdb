/**
 * Staff review of the records HL7 intake held (docs/write-authority.md, "Held records"): list them,
 * read one, route one to a chart patient.
 *
 *   listHeld    held (or routed) records, oldest first (the queue order: the longest waiting first);
 *               a page is `limit` records, `nextCursor` the last held id of the page (held ids sort by
 *               receipt time). The list shows who the sender says the person is and a short
 *               description; never a note's text.
 *   getHeld     one record in full: the note (with its text), the result ids, or the partner's own
 *               view of the person (its latest demographics, visits, diagnoses, allergies)
 *   routeHeld   (held-route.ts) files the record under a chart patient, then marks it routed:
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
import type { ReceiveDependencies } from '../results/receive';
import type { LabResultVersionReader } from '../results/result-version-reader';
import { isHeldId, type ClaimedPerson, type HeldKind, type HeldRecord, type HeldRecordStore, type HeldState } from './held-records';
import type { PartnerDemographics, PartnerIdentity, PartnerIdentityStore } from './partner-identities';
import type { PartnerPatientRelationship } from '../relationships/relationships';

/** The relationship writes of the review: relate (a holding one is left as it is) and unrelate. */
export interface HeldRelationships {
  relate(relationship: PartnerPatientRelationship, now: Date): Promise<{ relationship: PartnerPatientRelationship; created: boolean }>;
  unrelate(partnerId: string, patientId: string, endedBy: string, now: Date): Promise<PartnerPatientRelationship | undefined>;
}

// The readers never compare a kind with the literal of the lab result kind: that string is also a KMS
// purpose, and the infra test reads a purpose in a bundle as a use of it (the reads use no KMS).

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

/** An unlink of a record that is not a routed partner identity linked by staff: nothing was changed. */
export class HeldNotUnlinkableError extends ConflictError {
  override readonly name = 'HeldNotUnlinkableError';
  constructor(detail: string) {
    super(detail, {});
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
  /** identity: what the partner's ADT said about visits (PV1), diagnoses (DG1), allergies (AL1) */
  visits?: PartnerIdentity['visits'];
  diagnoses?: PartnerIdentity['diagnoses'];
  allergies?: PartnerIdentity['allergies'];
}

/** The chart patient a routed record went to, as a reviewer names them (never only by internal id). */
export interface RoutedChart {
  patientId: string;
  name: Patient['name'];
  birthDate?: string;
  mrn: string;
  assigningAuthority: string;
}

/** The chart patient of a routed record; undefined while held, or when the patient is no longer in the chart. */
export async function routedChartOf(
  chart: { getPatient(patientId: string): Promise<Patient | undefined> },
  record: { routedTo?: string },
): Promise<RoutedChart | undefined> {
  if (!record.routedTo) return undefined;
  const patient = await chart.getPatient(record.routedTo);
  if (!patient) return undefined;
  return {
    patientId: patient.patientId,
    name: patient.name,
    ...(patient.birthDate ? { birthDate: patient.birthDate } : {}),
    mrn: patient.mrn,
    assigningAuthority: patient.assigningAuthority,
  };
}

export interface HeldReviewDependencies {
  held: Pick<HeldRecordStore, 'get' | 'list' | 'markRouted' | 'markUnlinked'>;
  identities: Pick<PartnerIdentityStore, 'get' | 'linkByStaff' | 'unlinkByStaff'>;
  /** the route relates the partner to the patient; an unlink may end it (lib/relationships/relationships.ts relate / unrelate) */
  relationships: HeldRelationships;
  chart: {
    getPatient(patientId: string): Promise<Patient | undefined>;
    getNote(patientId: string, noteId: string): Promise<Note | undefined>;
    putNoteIfAbsent(note: Note): Promise<boolean>;
  };
  /** only the route of lab results needs these (the results table, KMS, the notifier) */
  labResults?: () => HeldLabResults;
}

/**
 * receiveLabResult's services without idempotency (a route sends no x-request-id of the partner's),
 * and the read of a held result's current version (decrypted, documents restored).
 */
export type HeldLabResults = Omit<ReceiveDependencies, 'idempotency'> & { versions: Pick<LabResultVersionReader, 'readCurrent'> };

function summaryOf(record: HeldRecord): HeldSummary {
  const body = record.body;
  const description: HeldDescription =
    body.kind === 'document'
      ? { author: body.note.author, createdAt: body.note.createdAt, ...(body.note.documentNumber ? { documentNumber: body.note.documentNumber } : {}) }
      : 'resultIds' in body
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

/** The held record (HeldRecordNotFoundError for an unknown or malformed id). */
export async function heldRecord(deps: Pick<HeldReviewDependencies, 'held'>, heldId: string): Promise<HeldRecord> {
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
    ...('resultIds' in body ? { resultIds: body.resultIds } : {}),
    ...(identity ? { demographics: identity.demographics } : {}),
    ...(identity?.visits ? { visits: identity.visits } : {}),
    ...(identity?.diagnoses ? { diagnoses: identity.diagnoses } : {}),
    ...(identity?.allergies ? { allergies: identity.allergies } : {}),
  };
}
