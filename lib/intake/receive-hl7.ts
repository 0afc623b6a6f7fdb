/**
 * POST /receiveHl7, the domain side: parse, check the header, idempotency on (MSH-4, MSH-10), hand the
 * message to its handler, answer with an HL7 ACK (a batch ACK for a batch).
 *
 * Outcomes (MSA-1): AA accepted and stored; AE application error in the content (ERR says where: a
 * parse error outside MSH, a record rule, a table value, a cap), nothing stored; AR rejected for the
 * header only (MSH unreadable, MSH-9 message type 200 / trigger event 201, MSH-10, MSH-11 processing id
 * 202, MSH-12 version 203, MSH-4 sender not allowed 204, MSH-10 reused for another message 205), nothing
 * stored. The ACK is laid out for the sender's version and honours MSH-15/16 (lib/hl7/ack.ts
 * `acknowledge`). Only a body without any MSH is a 4xx (no ACK can be addressed).
 * Infrastructure failures are not ACKed: they propagate (503, the sender retries; nothing half-written,
 * the idempotency claim is released).
 */
import { randomUUID } from 'node:crypto';
import { optionalEnv } from '../aws/environment';
import { acknowledge, encodeBatchAck, SUPPORTED_VERSIONS, type AckCode, type AckError } from '../hl7/ack';
import { ErrorCodes, Hl7ParseError } from '../hl7/parse-error';
import { headerForAck, parseHl7, valueAt, type ParsedMessage, type ParsedSegment } from '../hl7/parser';
import { Env } from '../config/service';
import { ConflictError, MalformedRequestError, RequestInProgressError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { logger } from '../observability/logger';
import type { IdempotencyStore, StoredResponse } from '../results/idempotency';
import { AckRejection, checkSender, handleMessage, SUPPORTED_EVENTS, type HandlerDependencies, type IntakeAudit } from './message-handlers';

/** What an accepted message's idempotency record keeps: the ACK and the audit facts (ids only). */
interface StoredAck extends StoredResponse {
  audit?: IntakeAudit;
}

export const RECEIVE_HL7_ENDPOINT = 'receiveHl7';

/**
 * Bounded work (docs/hl7-intake.md "Caps"): a message beyond any of these is answered AE with ERR-3
 * 100 (segment sequence error: the structure holds more repetitions than this receiver takes), ERR-2
 * the first segment beyond the cap, before anything is claimed or stored. At the caps a message is
 * processed well within the function's time limit (figures in docs/hl7-intake.md).
 */
export const HL7_INTAKE_LIMITS = {
  /** segments of one message (MSH included) */
  segmentsPerMessage: 2000,
  /** OBR segments (order groups: one lab result each) of one message */
  orderGroupsPerMessage: 50,
  /** OBX segments after one OBR (the lab result body holds at most 200 results) */
  observationsPerOrderGroup: 200,
  /** NK1 segments of one message (the chart keeps at most 20 next of kin) */
  nextOfKinPerMessage: 20,
} as const;

/** MSH-11 processing ids a stage may accept; P (production) always. */
export const PROCESSING_IDS = ['P', 'T', 'D'] as const;
export type ProcessingId = (typeof PROCESSING_IDS)[number];

/** The processing ids this stage files (HL7_ACCEPT_PROCESSING_IDS, comma-separated; default P). */
export function acceptedProcessingIds(): ProcessingId[] {
  const configured = optionalEnv(Env.hl7AcceptProcessingIds, 'P')
    .split(',')
    .map((id) => id.trim().toUpperCase())
    .filter((id): id is ProcessingId => (PROCESSING_IDS as readonly string[]).includes(id));
  return configured.length > 0 ? configured : ['P'];
}

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
  /** MSH-11 processing ids filed (default {@link acceptedProcessingIds}: the stage's setting) */
  acceptProcessingIds?: readonly string[];
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
    acknowledge({
      received,
      code,
      errors,
      controlId: newControlId(),
      timestamp: input.now,
      ownApplication: input.ownApplication,
      ownFacility: input.ownFacility,
    }).text;

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
    const code = parseErrorCode(error);
    log(input, code, error.code);
    return {
      ack: ack(header, code, [{ code: error.code, message: error.message, location: error.location }]),
      outcomes: [{ code, replayed: false }],
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
      const code = parseErrorCode(entry.error);
      log(input, code, entry.error.code);
      acks.push(ack(entry.header, code, [{ code: entry.error.code, message: entry.error.message, location: entry.error.location }]));
      outcomes.push({ code, replayed: false });
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
    fileControlId: newControlId(),
    receivedMessageCount: receivedBatchCount(input.body),
    timestamp: input.now,
    ownApplication: input.ownApplication,
    ownFacility: input.ownFacility,
    acks,
  });
  return { ack: batchAck, outcomes, batch: true };
}

type AckFactory = (received: ParsedSegment | undefined, code: AckCode, errors?: AckError[]) => string;

/**
 * A message that does not parse: AR when its MSH cannot be read (no location, or the error is in MSH:
 * delimiters, a second MSH, the batch frame), else AE (a content error: a bad escape, invalid UTF-8, a
 * broken segment id further down). An AR makes engines resend; a content error resent stays an error.
 */
function parseErrorCode(error: Hl7ParseError): AckCode {
  const segmentId = error.location?.segmentId;
  return segmentId === undefined || segmentId === 'MSH' || segmentId === 'BHS' || segmentId === 'FHS' ? 'AR' : 'AE';
}

/** BTS-1 of a batch as sent (the parser does not keep BTS), when the body holds a BTS. */
function receivedBatchCount(body: Buffer): string | undefined {
  const lines = body.toString('latin1').split(/\r\n|\r|\n/);
  const header = lines.find((line) => /^\x0b?(FHS|BHS|MSH)/.test(line))?.replace(/^\x0b/, '');
  const separator = header?.[3];
  const bts = lines.find((line) => line.startsWith('BTS'));
  if (!bts || !separator) return undefined;
  return bts.split(separator)[1] ?? '';
}

function headerRejection(message: ParsedMessage, acceptProcessingIds: readonly string[]): AckRejection | undefined {
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
  const messageType = valueAt(msh, 9, 1);
  if (!messageType) return new AckRejection('AR', [{ code: ErrorCodes.requiredFieldMissing, message: 'MSH-9 message type is required', location: at(9) }]);
  // MSH-9 is one of the three fields the standard validates before processing (with MSH-11, MSH-12):
  // an unsupported message type (table 0357 200) or trigger event (201) is AR, as table 0357 files both
  // among the rejection codes
  const events = SUPPORTED_EVENTS[messageType];
  if (!events) {
    return new AckRejection('AR', [
      {
        code: ErrorCodes.unsupportedMessageType,
        message: `MSH-9.1 message type must be one of ${Object.keys(SUPPORTED_EVENTS).join(', ')}`,
        location: { ...at(9), component: 1 },
      },
    ]);
  }
  const event =
    valueAt(msh, 9, 2) ||
    valueAt(
      message.segments.find((segment) => segment.name === 'EVN'),
      1,
    );
  if (!events.includes(event)) {
    return new AckRejection('AR', [
      {
        code: ErrorCodes.unsupportedEventCode,
        message: `MSH-9.2 trigger event of ${messageType} must be one of ${events.join(', ')}`,
        location: { ...at(9), component: 2 },
      },
    ]);
  }
  const processing = valueAt(msh, 11) || 'P';
  if (!(PROCESSING_IDS as readonly string[]).includes(processing))
    return new AckRejection('AR', [{ code: ErrorCodes.unsupportedProcessingId, message: 'MSH-11 processing id must be P, T or D', location: at(11) }]);
  // training and debugging messages are not filed into a production chart unless the stage takes them
  if (!acceptProcessingIds.includes(processing)) {
    return new AckRejection('AR', [
      {
        code: ErrorCodes.unsupportedProcessingId,
        message: `MSH-11 processing id ${processing} is not accepted here (this receiver files ${acceptProcessingIds.join(', ')})`,
        location: at(11),
      },
    ]);
  }
  return undefined;
}

/** The first cap of {@link HL7_INTAKE_LIMITS} the message goes beyond, as an AE (nothing is stored). */
function capRejection(message: ParsedMessage): AckRejection | undefined {
  const limits = HL7_INTAKE_LIMITS;
  const occurrences = new Map<string, number>();
  let orderGroups = 0;
  let observationsInGroup = 0;
  const beyond = (segmentId: string, what: string, cap: number) =>
    new AckRejection('AE', [
      {
        code: ErrorCodes.segmentSequence,
        message: `the message holds more than ${cap} ${what}: this receiver takes at most ${cap} (send several messages)`,
        location: { segmentId, segmentSequence: occurrences.get(segmentId) },
      },
    ]);
  for (const [index, segment] of message.segments.entries()) {
    const name = segment.name;
    occurrences.set(name, (occurrences.get(name) ?? 0) + 1);
    if (index >= limits.segmentsPerMessage) return beyond(name, 'segments', limits.segmentsPerMessage);
    if (name === 'OBR') {
      orderGroups += 1;
      observationsInGroup = 0;
      if (orderGroups > limits.orderGroupsPerMessage) return beyond(name, 'OBR order groups', limits.orderGroupsPerMessage);
    } else if (name === 'OBX' && orderGroups > 0) {
      observationsInGroup += 1;
      if (observationsInGroup > limits.observationsPerOrderGroup) return beyond(name, 'OBX observations in one OBR group', limits.observationsPerOrderGroup);
    } else if (name === 'NK1' && occurrences.get(name)! > limits.nextOfKinPerMessage) {
      return beyond(name, 'NK1 next of kin', limits.nextOfKinPerMessage);
    }
  }
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
  const headerProblem = headerRejection(message, input.acceptProcessingIds ?? acceptedProcessingIds());
  if (headerProblem) return rejected(headerProblem);
  try {
    checkSender(message, { principal: input.principal, requestId: input.requestId, now: input.now, ownApplication: input.ownApplication });
  } catch (error) {
    if (error instanceof AckRejection) return rejected(error);
    throw error;
  }
  // bounded work: the caps are checked before anything is claimed or stored
  const capProblem = capRejection(message);
  if (capProblem) return rejected(capProblem);

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
    const text = ack(msh, 'AA', handled.warnings ?? []);
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
