/**
 * POST /receiveHl7, the domain side: parse, check the header, idempotency on (MSH-4, MSH-10), hand the
 * message to its handler, answer with an HL7 ACK (a batch ACK for a batch).
 *
 * Outcomes (MSA-1): AA accepted and stored; AE application error (ERR says where), nothing stored;
 * AR rejected (parse failure, unsupported type or version, sender not allowed, control id reused for
 * another message), nothing stored. Only a body without any MSH is a 4xx (no ACK can be addressed).
 * Infrastructure failures are not ACKed: they propagate (503, the sender retries; nothing half-written,
 * the idempotency claim is released).
 */
import { randomUUID } from 'node:crypto';
import { encodeAck, encodeBatchAck, SUPPORTED_VERSIONS, type AckCode, type AckError } from '../hl7/ack';
import { ErrorCodes, Hl7ParseError } from '../hl7/parse-error';
import { headerForAck, parseHl7, valueAt, type ParsedMessage, type ParsedSegment } from '../hl7/parser';
import { ConflictError, MalformedRequestError, RequestInProgressError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { logger } from '../observability/logger';
import type { IdempotencyStore, StoredResponse } from '../results/idempotency';
import { AckRejection, checkSender, handleMessage, type HandlerDependencies, type IntakeAudit } from './message-handlers';

/** What an accepted message's idempotency record keeps: the ACK and the audit facts (ids only). */
interface StoredAck extends StoredResponse {
  audit?: IntakeAudit;
}

export const RECEIVE_HL7_ENDPOINT = 'receiveHl7';

export interface ReceiveHl7Dependencies extends HandlerDependencies {
  idempotency: IdempotencyStore;
}

export interface ReceiveHl7Input {
  body: Buffer;
  principal: Principal;
  requestId: string;
  now: Date;
  /** MSH-3 / MSH-4 the service writes (its own exports; ACKs when the sender left MSH-5/6 empty) */
  ownApplication: string;
  ownFacility: string;
}

export interface MessageOutcome {
  code: AckCode;
  replayed: boolean;
  audit?: IntakeAudit;
}

export interface ReceiveHl7Outcome {
  /** the ACK (or batch ACK) text */
  ack: string;
  outcomes: MessageOutcome[];
  batch: boolean;
}

/** A new ACK control id: 20 characters, unique. */
export function newControlId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 20).toUpperCase();
}

function hasMsh(body: Buffer): boolean {
  return /(^|[\r\n\x0b])MSH/.test(body.subarray(0, 1024 * 1024).toString('latin1'));
}

export async function receiveHl7(input: ReceiveHl7Input, services: ReceiveHl7Dependencies): Promise<ReceiveHl7Outcome> {
  if (!hasMsh(input.body)) {
    throw new MalformedRequestError('the body holds no MSH segment: send one HL7 v2 message (or an FHS/BHS batch) with segments ended by CR');
  }
  const ack = (received: ParsedSegment | undefined, code: AckCode, errors: AckError[] = []) =>
    encodeAck({
      received,
      code,
      errors,
      controlId: newControlId(),
      timestamp: input.now,
      ownApplication: input.ownApplication,
      ownFacility: input.ownFacility,
    });

  let parsed: ReturnType<typeof parseHl7>;
  try {
    parsed = parseHl7(input.body);
  } catch (error) {
    if (!(error instanceof Hl7ParseError)) throw error;
    const firstMsh = input.body
      .toString('latin1')
      .split(/\r\n|\r|\n/)
      .find((line) => line.replace(/^\x0b/, '').startsWith('MSH'));
    const header = firstMsh ? headerForAck(firstMsh.replace(/^\x0b/, '')) : undefined;
    log(input, 'AR', error.code);
    return {
      ack: ack(header, 'AR', [{ code: error.code, message: error.message, location: error.location }]),
      outcomes: [{ code: 'AR', replayed: false }],
      batch: false,
    };
  }

  if (parsed.kind === 'message') {
    const one = await receiveOne(parsed.message, input, services, ack);
    return { ack: one.ack, outcomes: [one.outcome], batch: false };
  }
  const acks: string[] = [];
  const outcomes: MessageOutcome[] = [];
  for (const entry of parsed.batch.messages) {
    if (!entry.ok) {
      log(input, 'AR', entry.error.code);
      acks.push(ack(entry.header, 'AR', [{ code: entry.error.code, message: entry.error.message, location: entry.error.location }]));
      outcomes.push({ code: 'AR', replayed: false });
      continue;
    }
    const one = await receiveOne(entry.message, input, services, ack);
    acks.push(one.ack);
    outcomes.push(one.outcome);
  }
  const batchAck = encodeBatchAck({
    receivedBatchHeader: parsed.batch.batchHeader,
    receivedFileHeader: parsed.batch.fileHeader,
    controlId: newControlId(),
    timestamp: input.now,
    ownApplication: input.ownApplication,
    ownFacility: input.ownFacility,
    acks,
  });
  return { ack: batchAck, outcomes, batch: true };
}

type AckFactory = (received: ParsedSegment | undefined, code: AckCode, errors?: AckError[]) => string;

function headerRejection(message: ParsedMessage): AckRejection | undefined {
  const msh = message.segments[0]!;
  const at = (field: number) => ({ segmentId: 'MSH', segmentSequence: 1, field });
  const version = valueAt(msh, 12);
  if (!(SUPPORTED_VERSIONS as readonly string[]).includes(version)) {
    return new AckRejection('AR', [
      { code: ErrorCodes.unsupportedVersionId, message: `MSH-12 version must be one of ${SUPPORTED_VERSIONS.join(', ')}`, location: at(12) },
    ]);
  }
  const controlId = valueAt(msh, 10);
  if (controlId.trim() === '' || controlId.length > 199) {
    return new AckRejection('AR', [
      { code: ErrorCodes.requiredFieldMissing, message: 'MSH-10 message control id is required (at most 199 characters)', location: at(10) },
    ]);
  }
  if (!valueAt(msh, 9, 1))
    return new AckRejection('AR', [{ code: ErrorCodes.requiredFieldMissing, message: 'MSH-9 message type is required', location: at(9) }]);
  const processing = valueAt(msh, 11) || 'P';
  if (!['P', 'T', 'D'].includes(processing))
    return new AckRejection('AR', [{ code: ErrorCodes.unsupportedProcessingId, message: 'MSH-11 processing id must be P, T or D', location: at(11) }]);
  return undefined;
}

/** The message's identity for idempotency: every segment's decoded values (so CR vs LF line ends do not matter). */
function canonicalMessage(message: ParsedMessage): string {
  return JSON.stringify(message.segments.map((segment) => segment.fields));
}

async function receiveOne(
  message: ParsedMessage,
  input: ReceiveHl7Input,
  services: ReceiveHl7Dependencies,
  ack: AckFactory,
): Promise<{ ack: string; outcome: MessageOutcome }> {
  const msh = message.segments[0]!;
  const rejected = (rejection: AckRejection): { ack: string; outcome: MessageOutcome } => {
    log(input, rejection.code, rejection.errors[0]?.code);
    return { ack: ack(msh, rejection.code, rejection.errors), outcome: { code: rejection.code, replayed: false } };
  };
  const headerProblem = headerRejection(message);
  if (headerProblem) return rejected(headerProblem);
  try {
    checkSender(message, { principal: input.principal, requestId: input.requestId, now: input.now, ownApplication: input.ownApplication });
  } catch (error) {
    if (error instanceof AckRejection) return rejected(error);
    throw error;
  }

  const keys = await services.keys();
  const idempotencyKey = keys.idempotencyKey(RECEIVE_HL7_ENDPOINT, valueAt(msh, 4), valueAt(msh, 10));
  const fingerprint = keys.bodyFingerprint(canonicalMessage(message));
  let token: string;
  try {
    const begun = await services.idempotency.begin(idempotencyKey, fingerprint, input.now);
    if (begun.kind === 'replay') {
      log(input, 'replay');
      // the first attempt's audit facts (ids only) come back with its ACK: a resend after a lost audit
      // record still names the stored records
      const stored = begun.response as StoredAck;
      return { ack: String(stored.body), outcome: { code: 'AA', replayed: true, ...(stored.audit ? { audit: stored.audit } : {}) } };
    }
    token = begun.token;
  } catch (error) {
    if (error instanceof ConflictError) {
      return rejected(
        new AckRejection('AR', [
          {
            code: ErrorCodes.duplicateKeyIdentifier,
            message: 'MSH-10 control id was already used by this sending facility for a different message',
            location: { segmentId: 'MSH', segmentSequence: 1, field: 10 },
          },
        ]),
      );
    }
    if (error instanceof RequestInProgressError) {
      return rejected(
        new AckRejection('AE', [
          {
            code: ErrorCodes.applicationRecordLocked,
            message: 'a message with this MSH-10 control id is still being processed; resend it later',
            location: { segmentId: 'MSH', segmentSequence: 1, field: 10 },
          },
        ]),
      );
    }
    throw error;
  }

  try {
    const handled = await handleMessage(message, services, {
      principal: input.principal,
      requestId: input.requestId,
      now: input.now,
      ownApplication: input.ownApplication,
    });
    const text = ack(msh, 'AA');
    const stored: StoredAck = { status: 200, body: text, audit: handled.audit };
    await services.idempotency
      .complete(idempotencyKey, token, stored)
      .catch((error: Error) => logger.warn('hl7.idempotency_complete_failed', { requestId: input.requestId, errorName: error?.name }));
    log(input, 'AA');
    return { ack: text, outcome: { code: 'AA', replayed: false, audit: handled.audit } };
  } catch (error) {
    // AE/AR store nothing and keep no claim: a corrected resend under the same control id is processed
    await services.idempotency.release(idempotencyKey, token).catch(() => undefined);
    if (error instanceof AckRejection) return rejected(error);
    throw error;
  }
}

function log(input: ReceiveHl7Input, decision: string, reason?: string): void {
  logger.info('hl7.message', {
    requestId: input.requestId,
    partnerId: input.principal.partnerId,
    keyId: input.principal.keyId,
    decision,
    reason: reason ? `code=${reason}` : undefined,
  });
}
