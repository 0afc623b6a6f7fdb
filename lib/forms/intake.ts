/**
 * Form intake (POST /receiveFormIntakeScope): validate, route, store once, queue.
 *
 *   patientId given, patient exists   -> state routed, stored under the patient          (201)
 *   patientId given, patient unknown  -> state pending_review, reason unknown_patient_id (202)
 *                                        (queued too: the matcher records candidates for staff)
 *   patientId absent                  -> state pending_match, queued for the matcher     (202)
 *   same (sourceSystemId, submissionId) again -> the first packet, nothing stored        (200)
 *
 * The packet is stored before the queue message is sent. If the send fails the request still
 * succeeds: the packet sits in pending_match and the sweeper (sweeper.ts) queues it again.
 */
import type { FieldError } from '../http/problem';
import type { CompiledValidator } from '../http/validation';
import { fieldErrors } from '../http/validation';
import { logger } from '../observability/logger';
import type { FormsDeps } from './dependencies';
import validateFormPacketBody from './generated/form-packet.validator';
import { packetIdFor } from './packet-id';
import { stateSkFor, statePkFor } from './packet-store';
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
}

export type IntakeResult =
  | { kind: 'created'; packet: PacketRecord }
  | { kind: 'duplicate'; packet: PacketRecord }
  /** the submission id was first used by another partner */
  | { kind: 'conflict' }
  | { kind: 'too_large'; limit: number };

function replay(existing: PacketRecord, submitter: Submitter): IntakeResult {
  return existing.partnerId === submitter.partnerId ? { kind: 'duplicate', packet: existing } : { kind: 'conflict' };
}

export async function receiveFormPacket(body: FormIntakeBody, submitter: Submitter, now: Date, deps: FormsDeps): Promise<IntakeResult> {
  const p = body.payload;
  const store = deps.store();
  const packetId = packetIdFor(p.sourceSystemId, p.submissionId);

  // a retry of a stored submission: answer from the stored packet without KMS or chart calls
  const existing = await store.getPacket(packetId, { withContent: false });
  if (existing) return replay(existing, submitter);

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
  if (contentBytes > MAX_PACKET_CONTENT_BYTES) return { kind: 'too_large', limit: MAX_PACKET_CONTENT_BYTES };

  const requested = p.patientId ?? p.patient.patientId;
  let state: PacketState = 'pending_match';
  let patientId: string | undefined;
  let reason: PacketReason | undefined;
  if (requested !== undefined) {
    const patient = await deps.patients().getPatient(requested);
    if (patient) {
      state = 'routed';
      patientId = requested;
    } else {
      state = 'pending_review';
      reason = 'unknown_patient_id';
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
    ...(reason === 'unknown_patient_id' ? { requestedPatientId: requested } : {}),
    receivedAt: at,
    stateChangedAt: at,
    statePk: statePkFor(state, patientId),
    stateSk: stateSkFor(at, packetId),
    queueAttempts: queued ? 1 : 0,
    ...(queued ? { lastQueuedAt: at } : {}),
    history: [entry],
    content: await deps.cipher().seal(packetId, p.sourceSystemId, plaintext),
    contentBytes,
  };

  if ((await store.createPacket(record)) === 'exists') {
    // a concurrent request with the same submission won the conditional put
    const winner = await store.getPacket(packetId, { withContent: false });
    if (!winner) throw new Error('packet vanished after a failed conditional put');
    return replay(winner, submitter);
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
