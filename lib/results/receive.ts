/**
 * POST /receiveTestData, the domain side: validate, check the partner may send for the sender,
 * idempotency, decide where the result files (`filing`: the named chart patient when the partner is
 * related to it and the demographics agree, else held for review; lib/results/lab-filing.ts), store
 * the version encrypted, move the current pointer, notify, hold.
 */
import type { Principal } from '../keys/access-decision';
import { ForbiddenByPolicyError } from '../domain-errors';
import type { HeldRecord } from '../intake/held-records';
import { logger } from '../observability/logger';
import { canonicalJson } from './canonical-json';
import type { IdempotencyStore, StoredResponse } from './idempotency';
import type { ResultKeys } from './lookup-keys';
import { notificationFor, type ResultNotifier } from './notifications';
import type { LabResultWriter } from './result-writer';
import type { LabResultData, NotificationState, VersionRecord } from './types';
import { acceptLabResult } from './validation';

export const RECEIVE_ENDPOINT = 'receiveTestData';
export const SUCCESS_MESSAGE = 'Encrypted result saved; notifications attempted.';
/**
 * The retry job leaves a fresh version alone this long (the request itself is still about to
 * notify); longer than the function timeout.
 */
export const NOTIFICATION_GRACE_MS = 60 * 1000;

export interface ReceiveInput {
  /** the parsed JSON body */
  body: unknown;
  principal: Principal;
  requestId: string;
  /** true when the caller sent x-request-id: idempotency applies */
  requestIdSupplied: boolean;
  /** provenance: the source message id (MSH-10 for HL7; default the x-request-id) */
  sourceMessageId?: string;
  /** the chart patient a reviewer routed the result to: files there, no filing decision (the body stays as sent) */
  fileInto?: string;
  now: Date;
}

/**
 * The answer to the sender. It says nothing about the chart: whether `patientID` is a patient of
 * ours is recorded on the stored version and in the (internal) notification, never answered, so
 * the status and body shape are the same for a known and an unknown patient id.
 */
export interface ReceiveResponseBody {
  status: 'success';
  message: string;
  requestId: string;
  resultId: string;
  /** the version id of this submission */
  version: string;
  /** whether this version is the result's current version after the save */
  current: boolean;
  /** true when this exact submission had already been stored (nothing new written) */
  duplicate: boolean;
  /** sent, or pending (the publish failed; the retry job will send it) */
  notification: NotificationState;
}

export interface ReceiveOutcome {
  status: number;
  body: ReceiveResponseBody;
  /** true when the body is the stored first response of this x-request-id */
  replayed: boolean;
  /**
   * The chart patient the result was stored for, when the lab's patient id is a chart patient's (for
   * the audit trail, never for the answer: the lab is not told whether the patient exists).
   */
  chartPatientId?: string;
}

export interface ReceiveDependencies {
  /** the writes only (LabResultWriter; LabResultStore offers the same methods beside its reads) */
  store: Pick<LabResultWriter, 'saveVersion' | 'ensureCurrent' | 'markNotificationSent' | 'recordNotificationFailure' | 'currentOwner'>;
  keys(): Promise<ResultKeys>;
  /** used only for requests with x-request-id (requestIdSupplied) */
  idempotency: Pick<IdempotencyStore, 'begin' | 'complete' | 'release'>;
  patientExists(patientId: string): Promise<boolean>;
  notifier: ResultNotifier;
  /**
   * Where a partner's submission files (POST /receiveTestData only). Absent: the body's patientID is
   * already the decision (HL7 ORU and FHIR intake resolve the patient before; held routing names the
   * chart patient staff chose).
   */
  filing?: LabResultFiling;
}

/** Where a submission is stored, and the review record when it is held. */
export interface FilingTarget {
  /** the patient id the version is stored under: the chart patient's, or a held patient id */
  patientID: string;
  /** set when held: the review record of the stored version */
  hold?: (version: VersionRecord) => Promise<Omit<HeldRecord, 'state'>>;
}

export interface LabResultFiling {
  decide(data: LabResultData, principal: Principal, now: Date): Promise<FilingTarget>;
  hold(record: Omit<HeldRecord, 'state'>): Promise<boolean>;
}

/**
 * Whether the partner owns the sender id. Exact ids only: a wildcard `*` (stored by partners made before
 * sender ids had one owner, lib/keys/identity-claims.ts) allows nothing, since it would cover every other
 * partner's senders (`npm run partners -- claims` lists such records; docs/write-authority.md).
 */
export function senderAllowed(principal: Pick<Principal, 'allowedSenderIds'>, senderId: string): boolean {
  return senderId !== '*' && (principal.allowedSenderIds ?? []).includes(senderId);
}

export async function receiveLabResult(input: ReceiveInput, services: ReceiveDependencies): Promise<ReceiveOutcome> {
  const accepted = acceptLabResult(input.body, input.now);
  const data = accepted.body.data;
  if (!senderAllowed(input.principal, data.senderID)) {
    throw new ForbiddenByPolicyError('this API key may not submit results for this senderID', [
      { pointer: '/data/senderID', message: 'is not a sender this partner may submit for' },
    ]);
  }

  const keys = await services.keys();
  const fingerprint = keys.bodyFingerprint(canonicalJson(accepted.body));

  let claim: { key: string; token: string } | undefined;
  if (input.requestIdSupplied) {
    const key = keys.idempotencyKey(RECEIVE_ENDPOINT, input.principal.partnerId, input.requestId);
    const begun = await services.idempotency.begin(key, fingerprint, input.now);
    if (begun.kind === 'replay') {
      logger.info('lab_result.replayed', { requestId: input.requestId, partnerId: input.principal.partnerId, decision: 'replay' });
      return { status: begun.response.status, body: begun.response.body as ReceiveResponseBody, replayed: true };
    }
    claim = { key, token: begun.token };
  }

  let response: StoredResponse & { body: ReceiveResponseBody };
  let chartPatientId: string | undefined;
  try {
    const saved = await save(input, services, keys, fingerprint, accepted);
    response = { status: 200, body: saved.body };
    chartPatientId = saved.chartPatientId;
  } catch (error) {
    if (claim) await services.idempotency.release(claim.key, claim.token).catch(() => undefined);
    throw error;
  }
  if (claim) {
    // the work is done; a failure here only means a duplicate waits for the lease, then replays the same work
    await services.idempotency
      .complete(claim.key, claim.token, response)
      .catch((error: Error) => logger.warn('lab_result.idempotency_complete_failed', { requestId: input.requestId, errorName: error?.name }));
  }
  return { ...response, replayed: false, ...(chartPatientId ? { chartPatientId } : {}) };
}

async function save(
  input: ReceiveInput,
  services: ReceiveDependencies,
  keys: ResultKeys,
  fingerprint: string,
  accepted: ReturnType<typeof acceptLabResult>,
): Promise<{ body: ReceiveResponseBody; chartPatientId?: string }> {
  const sourceMessageId = input.sourceMessageId ?? input.requestId;
  const target =
    input.fileInto !== undefined
      ? { patientID: input.fileInto }
      : services.filing
        ? await services.filing.decide(accepted.body.data, input.principal, input.now)
        : undefined;
  const data = accepted.body.data;
  // the body is stored as sent; the patient it files under (the chart patient, or the held patient id)
  // is sealed beside it, and the version id derives from both, so a resend after the partner became
  // related files anew
  const filedPatientId = target?.patientID ?? data.patientID;
  const versionFingerprint = filedPatientId === data.patientID ? fingerprint : keys.bodyFingerprint(canonicalJson({ body: accepted.body, filedPatientId }));
  const resultId = await ownedResultId(keys, data, input.principal.partnerId, services.store);
  const versionId = keys.versionId(resultId, accepted.status, accepted.resultedAtKey, versionFingerprint);
  const patientMatched = target?.hold ? false : await services.patientExists(filedPatientId);

  const { created, version } = await services.store.saveVersion({
    accepted,
    resultId,
    versionId,
    patientKey: keys.patientKey(filedPatientId),
    patientMatched,
    filedPatientId,
    partnerId: input.principal.partnerId,
    keyId: input.principal.keyId,
    receivedAt: input.now,
    sourceMessageId,
    notificationNotBefore: new Date(input.now.getTime() + NOTIFICATION_GRACE_MS),
  });
  const current = await services.store.ensureCurrent(version, input.now);
  const notification = version.notificationState === 'pending' ? await notify(version, services, input) : 'sent';
  // held for review after the version exists (a resend of the same version holds the same record once)
  if (target?.hold && services.filing) await services.filing.hold(await target.hold(version));

  logger.info('lab_result.saved', {
    requestId: input.requestId,
    resultId,
    partnerId: input.principal.partnerId,
    keyId: input.principal.keyId,
    decision: created ? 'created' : 'duplicate',
    reason: `current=${current};notification=${notification};patientMatched=${version.patientMatched}${target?.hold ? ';held' : ''}`,
    count: accepted.results.length,
  });
  return {
    body: {
      status: 'success',
      message: SUCCESS_MESSAGE,
      requestId: input.requestId,
      resultId,
      version: versionId,
      current,
      duplicate: !created,
      notification,
    },
    ...(version.patientMatched ? { chartPatientId: filedPatientId } : {}),
  };
}

/**
 * A result's identity is its partner's: (sender, accession, universal service) names the result only
 * while the partner writing is the one whose version is current there. When a sender id changed hands
 * (released by one partner, given to another), the new owner's result for the same accession is its
 * own result (the id keyed with its partner as well), never a version of the earlier owner's. A
 * pointer stored before pointers kept their partner counts as the writer's (results of a stage that
 * ran before this rule keep their corrections).
 */
async function ownedResultId(keys: ResultKeys, data: LabResultData, partnerId: string, store: Pick<LabResultWriter, 'currentOwner'>): Promise<string> {
  const code = data.order?.universalService?.code;
  const shared = keys.resultId(data.senderID, data.accessionNumber, code);
  const owner = await store.currentOwner(shared);
  if (owner === undefined || owner === null || owner === partnerId) return shared;
  return keys.resultId(`${partnerId}\u0000${data.senderID}`, data.accessionNumber, code);
}

/** Publishes the notification; a failure leaves it pending for the retry job and does not fail the request. */
async function notify(version: VersionRecord, services: ReceiveDependencies, input: ReceiveInput): Promise<NotificationState> {
  try {
    await services.notifier.publish(notificationFor(version));
  } catch (error) {
    const errorName = (error as Error)?.name ?? 'Error';
    logger.warn('lab_result.notification_failed', {
      requestId: input.requestId,
      resultId: version.resultId,
      errorName,
      attempt: version.notificationAttempts + 1,
    });
    // due at the next scheduled run; if even this write fails the grace period still brings it back
    await services.store.recordNotificationFailure(version, version.notificationAttempts + 1, input.now, errorName).catch(() => undefined);
    return 'pending';
  }
  try {
    await services.store.markNotificationSent(version, input.now);
  } catch (error) {
    // sent but not recorded: the retry job sends it again (consumers deduplicate on notificationId)
    logger.warn('lab_result.notification_unrecorded', { requestId: input.requestId, resultId: version.resultId, errorName: (error as Error)?.name });
  }
  return 'sent';
}
