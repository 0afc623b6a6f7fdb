/**
 * Form intake (POST /receiveFormIntakeScope): validate, check the partner owns the form source,
 * route, store once, queue.
 *
 *   sourceSystemId not owned by the partner  -> ForbiddenByPolicyError (403), nothing stored
 *   patientId given, patient exists and the packet's first name, last name and birth date agree
 *   with it (normalised as the matcher does, matcher.ts demographicsAgree)
 *                                     -> state routed, stored under the patient
 *   patientId given, anything else disagrees or is missing (no birth date, a nickname, a typo)
 *                                     -> state pending_review, reason demographics_mismatch
 *   patientId given, patient unknown  -> state pending_review, reason unknown_patient_id
 *                                        (both queued too: the matcher records candidates for staff)
 *   patientId absent                  -> state pending_match, queued for the matcher
 *   same (partner, sourceSystemId, submissionId) again, same content -> the first packet, nothing stored
 *   same again with different content -> ConflictError (409), nothing stored
 *   content over MAX_PACKET_CONTENT_BYTES -> ContentTooLargeError (413), nothing stored
 * The sender's answer is the same whatever happened (the endpoint answers 202 + packet id): intake
 * never tells a sender whether a patient exists or where a packet went.
 *
 * The packet is stored before the queue message is sent. If the send fails the request still
 * succeeds: the packet sits in pending_match and the sweeper (sweeper.ts) queues it again.
 */
import { mayFileForPatient } from '../relationships/patient-access';
import { ConflictError, ContentTooLargeError, ForbiddenByPolicyError, type FieldError } from '../domain-errors';
import type { CompiledValidator } from '../schemas/compiled-validator';
import { fieldErrors } from '../schemas/field-errors';
import { logger } from '../observability/logger';
import type { FormsDependencies, StorePart } from './forms-dependencies';
import type { PacketIntakeWriter } from './packet-intake-writer';
import validateFormPacketBody from './generated/form-packet.validator';
import { canonicalJson } from '../results/canonical-json';
import { contentFingerprintOf } from './match-keys';
import { candidateFromPatient, demographicsAgree } from './matcher';
import { packetIdFor } from './packet-id';
import { stateSkFor, statePkFor } from './packet-items';
import type { FormIntakeBody, HistoryEntry, PacketContent, PacketReason, PacketRecord, PacketState } from './types';

/** Largest plaintext content stored in one packet item (DynamoDB items are at most 400 KB). */
export const MAX_PACKET_CONTENT_BYTES = 200 * 1024;

const validateBody: CompiledValidator = validateFormPacketBody;

export type IntakeValidation = { ok: true; body: FormIntakeBody } | { ok: false; errors: FieldError[] };

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Schema errors plus the rules a schema cannot say, all in one list:
 * a date of birth in the future; two different patientIds (payload.patientId and payload.patient.patientId).
 */
export function validateIntakeBody(value: unknown, now: Date): IntakeValidation {
  const errors: FieldError[] = validateBody(value) ? [] : fieldErrors(validateBody.errors);
  const payload = isObject(value) && isObject(value.payload) ? value.payload : undefined;
  const patient = payload && isObject(payload.patient) ? payload.patient : undefined;
  if (patient && typeof patient.dob === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(patient.dob) && patient.dob > now.toISOString().slice(0, 10)) {
    errors.push({ pointer: '/payload/patient/dob', message: 'must not be in the future' });
  }
  if (payload && patient && typeof payload.patientId === 'string' && typeof patient.patientId === 'string' && payload.patientId !== patient.patientId) {
    errors.push({ pointer: '/payload/patient/patientId', message: 'differs from /payload/patientId; send one patientId' });
  }
  return errors.length === 0 ? { ok: true, body: value as FormIntakeBody } : { ok: false, errors };
}

export interface Submitter {
  keyId: string;
  partnerId: string;
  /** the form sourceSystemIds the partner owns (exact ids; a stored '*' allows nothing) */
  allowedFormSourceIds?: readonly string[];
}

/** Whether the partner owns the form source system it names. */
export function formSourceAllowed(submitter: Pick<Submitter, 'allowedFormSourceIds'>, sourceSystemId: string): boolean {
  // exact ids only: a wildcard `*` (stored before form sources had one owner) would cover every other partner's
  return sourceSystemId !== '*' && (submitter.allowedFormSourceIds ?? []).includes(sourceSystemId);
}

/**
 * What intake did with an accepted packet. Refusals are thrown: ForbiddenByPolicyError (the
 * partner does not own the sourceSystemId), ContentTooLargeError, ConflictError (the same
 * submission id with other content, or first used by another partner).
 */
export type IntakeResult = { kind: 'created'; packet: PacketRecord } | { kind: 'duplicate'; packet: PacketRecord };

function replay(existing: PacketRecord, submitter: Submitter, fingerprint: string): IntakeResult {
  // packets stored before ids were partner-scoped: the submission id was first used by another partner
  if (existing.partnerId !== submitter.partnerId) throw new ConflictError('this sourceSystemId and submissionId were already submitted by another partner');
  // packets stored before fingerprints existed have none: treated as the same content
  if (existing.contentHash && existing.contentHash !== fingerprint)
    throw new ConflictError('this submissionId was already received with different content; send a changed form with a new submissionId');
  return { kind: 'duplicate', packet: existing };
}

/** The parts intake uses: the store part only reads a packet and stores a new one (PacketIntakeWriter, not FormsStore). */
export type FormIntakeDependencies = Pick<FormsDependencies, 'patients' | 'cipher' | 'keys' | 'queue' | 'relationships'> &
  StorePart<Pick<PacketIntakeWriter, 'getPacket' | 'createPacket'>>;

export async function receiveFormPacket(body: FormIntakeBody, submitter: Submitter, now: Date, deps: FormIntakeDependencies): Promise<IntakeResult> {
  const p = body.payload;
  if (!formSourceAllowed(submitter, p.sourceSystemId)) throw new ForbiddenByPolicyError("this API key's partner does not own this sourceSystemId");
  const store = deps.store();
  const packetId = packetIdFor(submitter.partnerId, p.sourceSystemId, p.submissionId);
  const requested = p.patientId ?? p.patient.patientId;

  const content: PacketContent = {
    ...(p.formName !== undefined ? { formName: p.formName } : {}),
    patient: {
      ...(p.patient.externalPatientId !== undefined ? { externalPatientId: p.patient.externalPatientId } : {}),
      firstName: p.patient.firstName,
      lastName: p.patient.lastName,
      ...(p.patient.dob !== undefined ? { dob: p.patient.dob } : {}),
      ...(p.patient.email !== undefined ? { email: p.patient.email } : {}),
    },
    answers: p.answers,
  };
  const plaintext = JSON.stringify(content);
  const contentBytes = Buffer.byteLength(plaintext, 'utf8');
  if (contentBytes > MAX_PACKET_CONTENT_BYTES)
    throw new ContentTooLargeError(`the packet content (patient, answers, form name) exceeds ${MAX_PACKET_CONTENT_BYTES} bytes`);

  // keyed fingerprint of what was submitted (the match-index HMAC key, cached per container)
  const key = await deps.keys().key({ create: true, now });
  if (!key) throw new Error('match index key unavailable');
  const fingerprint = contentFingerprintOf(key, canonicalJson({ formId: p.formId, patientId: requested ?? null, content }));

  // a retry of a stored submission: answered from the stored packet without chart calls
  const existing = await store.getPacket(packetId, { withContent: false });
  if (existing) return replay(existing, submitter, fingerprint);

  let state: PacketState = 'pending_match';
  let patientId: string | undefined;
  let reason: PacketReason | undefined;
  if (requested !== undefined && !(await mayFileForPatient(submitter.partnerId, requested, deps.relationships, now))) {
    // a patient id names a patient; only a relationship lets the partner file there. The reviewer is
    // told whether the id named a chart patient at all (the sender never is: the answer is 202 alike)
    state = 'pending_review';
    reason = (await deps.patients().getPatient(requested)) ? 'no_relationship' : 'unknown_patient_id';
  } else if (requested !== undefined) {
    const patient = await deps.patients().getPatient(requested);
    const subject = { firstName: p.patient.firstName, lastName: p.patient.lastName, dob: p.patient.dob };
    if (patient && demographicsAgree(subject, candidateFromPatient(patient))) {
      state = 'routed';
      patientId = requested;
    } else {
      state = 'pending_review';
      reason = patient ? 'demographics_mismatch' : 'unknown_patient_id';
    }
  }

  const at = now.toISOString();
  const queued = state !== 'routed';
  const entry: HistoryEntry = {
    at,
    action: 'received',
    state,
    actor: 'api-key',
    keyId: submitter.keyId,
    partnerId: submitter.partnerId,
    ...(reason ? { reason } : {}),
    ...(patientId ? { patientId } : {}),
  };
  const record: PacketRecord = {
    packetId,
    sourceSystemId: p.sourceSystemId,
    formId: p.formId,
    submissionId: p.submissionId,
    partnerId: submitter.partnerId,
    keyId: submitter.keyId,
    state,
    ...(reason ? { reason } : {}),
    ...(patientId ? { patientId } : {}),
    ...(reason ? { requestedPatientId: requested } : {}),
    receivedAt: at,
    stateChangedAt: at,
    statePk: statePkFor(state, packetId, patientId),
    stateSk: stateSkFor(at, packetId),
    queueAttempts: queued ? 1 : 0,
    ...(queued ? { lastQueuedAt: at } : {}),
    history: [entry],
    content: await deps.cipher().seal(packetId, p.sourceSystemId, plaintext),
    contentBytes,
    contentHash: fingerprint,
  };

  if ((await store.createPacket(record)) === 'exists') {
    // a concurrent request with the same submission won the conditional put
    const winner = await store.getPacket(packetId, { withContent: false });
    if (!winner) throw new Error('packet vanished after a failed conditional put');
    return replay(winner, submitter, fingerprint);
  }

  if (queued) {
    try {
      await deps.queue().send(packetId);
    } catch (error) {
      // stored, not queued: the sweeper re-queues pending_match packets older than its threshold
      logger.warn('forms.intake.queue_send_failed', { packetId, errorName: (error as Error | undefined)?.name ?? 'unknown' });
    }
  }
  logger.info('forms.intake.stored', { packetId, partnerId: submitter.partnerId, decision: state, reason });
  return { kind: 'created', packet: record };
}
