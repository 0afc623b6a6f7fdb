/**
 * Idempotency on a caller-supplied x-request-id, in the idempotency table (TTL attribute
 * expiresAt). One item per (endpoint, partner, request id), keyed by an HMAC of the three so two
 * partners never collide and the table shows no caller-chosen text:
 *
 *   pk            <endpoint>#<hmac>
 *   state         in_progress | completed
 *   fingerprint   HMAC of the canonical body
 *   token         random owner token of the in-progress attempt
 *   leaseUntil    epoch ms; an in-progress record older than this belongs to a crashed attempt
 *   response      completed: the first response, JSON { status, body } (ids only, no PHI)
 *   expiresAt     epoch s, RECORD_TTL_SECONDS after the first attempt
 *
 * Rules: a new id claims the record (conditional put). The same id with the same body gets the
 * first response back once it is completed, a 409 with Retry-After while it is in progress; the
 * same id with another body is a 409. An attempt that fails releases its claim (so the caller can
 * retry at once); one that crashes is taken over by the same request after the lease.
 */
import { randomUUID } from 'node:crypto';
import { DeleteItemCommand, GetItemCommand, PutItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConflictError, RequestInProgressError } from '../domain-errors';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';

/** How long a request id is remembered. */
export const RECORD_TTL_SECONDS = 24 * 60 * 60;
/** Lease of an in-progress attempt: longer than the function timeout (29 s) plus the early-answer margin. */
export const LEASE_MS = 35 * 1000;
/** Retry-After for a duplicate of a request still in progress (capped by the lease left). */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 2;
const DEPENDENCY = 'idempotency-table';

export interface StoredResponse {
  status: number;
  body: unknown;
}

export type BeginOutcome = { kind: 'claimed'; token: string } | { kind: 'replay'; response: StoredResponse };

export class IdempotencyStore {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  /**
   * Claims `key` for this attempt, or answers from the record: replay (completed, same body),
   * ConflictError (another body) or RequestInProgressError (same body, still running).
   */
  async begin(key: string, fingerprint: string, now: Date): Promise<BeginOutcome> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const token = randomUUID();
      try {
        await awsCall(DEPENDENCY, () =>
          this.db.send(
            new PutItemCommand({
              TableName: this.table,
              Item: {
                pk: { S: key },
                state: { S: 'in_progress' },
                fingerprint: { S: fingerprint },
                token: { S: token },
                leaseUntil: { N: String(now.getTime() + LEASE_MS) },
                createdAt: { S: now.toISOString() },
                expiresAt: { N: String(Math.floor(now.getTime() / 1000) + RECORD_TTL_SECONDS) },
              },
              // new, or expired but not yet deleted by TTL, or a crashed attempt of the same body
              ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowS OR (#state = :inProgress AND leaseUntil < :nowMs AND fingerprint = :fp)',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: {
                ':nowS': { N: String(Math.floor(now.getTime() / 1000)) },
                ':nowMs': { N: String(now.getTime()) },
                ':inProgress': { S: 'in_progress' },
                ':fp': { S: fingerprint },
              },
            }),
          ),
        );
        return { kind: 'claimed', token };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
      const out = await awsCall(DEPENDENCY, () => this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: key } }, ConsistentRead: true })));
      const item = out.Item;
      if (!item) continue; // released meanwhile: claim again
      if (Number(item.expiresAt?.N ?? 0) < Math.floor(now.getTime() / 1000)) continue;
      if (item.fingerprint?.S !== fingerprint) {
        throw new ConflictError('this x-request-id was already used with a different request body; send a new x-request-id for a new submission');
      }
      if (item.state?.S === 'completed' && item.response?.S) {
        return { kind: 'replay', response: JSON.parse(item.response.S) as StoredResponse };
      }
      const leaseLeftMs = Number(item.leaseUntil?.N ?? 0) - now.getTime();
      if (leaseLeftMs < 0) continue; // crashed attempt: take it over
      const retryAfter = Math.max(1, Math.min(IN_PROGRESS_RETRY_AFTER_SECONDS, Math.ceil(leaseLeftMs / 1000)));
      throw new RequestInProgressError('a request with this x-request-id is still being processed; retry the same request later', retryAfter);
    }
    throw new RequestInProgressError(
      'a request with this x-request-id is still being processed; retry the same request later',
      IN_PROGRESS_RETRY_AFTER_SECONDS,
    );
  }

  /** Records the first response. Loses silently to an attempt that took the record over. */
  async complete(key: string, token: string, response: StoredResponse): Promise<void> {
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: key } },
            UpdateExpression: 'SET #state = :completed, #response = :response REMOVE leaseUntil',
            ConditionExpression: '#token = :token',
            ExpressionAttributeNames: { '#state': 'state', '#response': 'response', '#token': 'token' },
            ExpressionAttributeValues: { ':completed': { S: 'completed' }, ':response': { S: JSON.stringify(response) }, ':token': { S: token } },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /** Releases a claim after a failed attempt, so the same request can be retried at once. */
  async release(key: string, token: string): Promise<void> {
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new DeleteItemCommand({
            TableName: this.table,
            Key: { pk: { S: key } },
            ConditionExpression: '#token = :token AND #state = :inProgress',
            ExpressionAttributeNames: { '#token': 'token', '#state': 'state' },
            ExpressionAttributeValues: { ':token': { S: token }, ':inProgress': { S: 'in_progress' } },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}
