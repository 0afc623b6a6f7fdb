/**
 * The webhooks table: subscriptions and the delivery log. Single-item conditional writes only.
 *
 *   subscription  pk SUB#<subscriptionId>        sk SUB
 *                 listPk SUBSCRIPTIONS  listSk <partnerId>#<subscriptionId>
 *                 subscriptionId, partnerId, url, events, enabled, disabledReason, exportScope, secret (envelope),
 *                 createdAt, updatedAt
 *   delivery      pk DELIVERY#<deliveryId>       sk DELIVERY
 *                 listPk SUB#<subscriptionId>#DELIVERIES  listSk <createdAt>#<deliveryId>
 *                 deliveryId, subscriptionId, eventId, eventType, event (the thin event, JSON), state,
 *                 attempts, createdAt, queuedAt, lastAttemptAt, lastHttpStatus, nextAttemptAt, expiresAt,
 *                 result { partnerId, filed } (who may hear of it: audience.ts), skippedReason
 *   attempt       pk DELIVERY#<deliveryId>       sk ATTEMPT#<nnnn>
 *                 attempt, at, httpStatus, latencyMs, outcome, errorName, nextAttemptAt, expiresAt
 *
 * Delivery and attempt items expire DELIVERY_LOG_TTL_DAYS after they were written (TTL attribute
 * expiresAt); subscriptions never. No item holds a request or response body.
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { isConditionalCheckFailed } from '../aws/dependency-calls';
import { Tables } from '../config/service';
import type { Delivery, DeliveryAttempt, DeliveryState, Subscription, WebhookEvent } from './types';

export const DELIVERY_LOG_TTL_DAYS = 30;
const BY_LIST = Tables.webhooks.indexes[0]!.name;
const SUBSCRIPTIONS = 'SUBSCRIPTIONS';
const subPk = (id: string) => `SUB#${id}`;
const deliveryPk = (id: string) => `DELIVERY#${id}`;
const attemptSk = (n: number) => `ATTEMPT#${String(n).padStart(4, '0')}`;
const expiry = (at: Date) => Math.floor(at.getTime() / 1000) + DELIVERY_LOG_TTL_DAYS * 86_400;

export interface StoredSubscription {
  subscription: Subscription;
  /** the signing secret as a serialized KMS envelope */
  secretEnvelope: string;
}

function subscriptionOf(item: Record<string, AttributeValue>): StoredSubscription {
  const v = unmarshall(item) as Record<string, unknown>;
  return {
    subscription: {
      subscriptionId: v.subscriptionId as string,
      partnerId: v.partnerId as string,
      url: v.url as string,
      events: v.events as Subscription['events'],
      enabled: v.enabled === true,
      ...(v.disabledReason ? { disabledReason: v.disabledReason as Subscription['disabledReason'] } : {}),
      // absent on subscriptions made before issue 26: no export scope (the safe default)
      exportScope: v.exportScope === true,
      createdAt: v.createdAt as string,
      updatedAt: v.updatedAt as string,
    },
    secretEnvelope: v.secret as string,
  };
}

function deliveryOf(item: Record<string, AttributeValue>): Delivery {
  const v = unmarshall(item) as Record<string, unknown>;
  return {
    deliveryId: v.deliveryId as string,
    subscriptionId: v.subscriptionId as string,
    eventId: v.eventId as string,
    eventType: v.eventType as Delivery['eventType'],
    event: JSON.parse(v.event as string) as WebhookEvent,
    state: v.state as DeliveryState,
    attempts: typeof v.attempts === 'number' ? v.attempts : 0,
    createdAt: v.createdAt as string,
    ...(typeof v.lastAttemptAt === 'string' ? { lastAttemptAt: v.lastAttemptAt } : {}),
    ...(typeof v.lastHttpStatus === 'number' ? { lastHttpStatus: v.lastHttpStatus } : {}),
    ...(typeof v.nextAttemptAt === 'string' ? { nextAttemptAt: v.nextAttemptAt } : {}),
    ...(resultFactsOf(v.result) ? { result: resultFactsOf(v.result)! } : {}),
    ...(typeof v.skippedReason === 'string' ? { skippedReason: v.skippedReason } : {}),
  };
}

/** The stored audience facts of a delivery, or undefined when absent or not of their shape (the worker then reads the result store). */
function resultFactsOf(value: unknown): Delivery['result'] {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.filed !== 'boolean' || (v.partnerId !== undefined && typeof v.partnerId !== 'string')) return undefined;
  return { filed: v.filed, ...(typeof v.partnerId === 'string' ? { partnerId: v.partnerId } : {}) };
}

function attemptOf(item: Record<string, AttributeValue>): DeliveryAttempt {
  const v = unmarshall(item) as Record<string, unknown>;
  return {
    deliveryId: v.deliveryId as string,
    subscriptionId: v.subscriptionId as string,
    eventId: v.eventId as string,
    attempt: v.attempt as number,
    at: v.at as string,
    ...(typeof v.httpStatus === 'number' ? { httpStatus: v.httpStatus } : {}),
    latencyMs: v.latencyMs as number,
    outcome: v.outcome as DeliveryAttempt['outcome'],
    ...(typeof v.errorName === 'string' ? { errorName: v.errorName } : {}),
    ...(typeof v.nextAttemptAt === 'string' ? { nextAttemptAt: v.nextAttemptAt } : {}),
  };
}

export class WebhookStore {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  // ------------------------------------------------------------------ subscriptions

  async putSubscription(subscription: Subscription, secretEnvelope: string): Promise<void> {
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall(
          {
            pk: subPk(subscription.subscriptionId),
            sk: 'SUB',
            listPk: SUBSCRIPTIONS,
            listSk: `${subscription.partnerId}#${subscription.subscriptionId}`,
            ...subscription,
            secret: secretEnvelope,
          },
          { removeUndefinedValues: true },
        ),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async getSubscription(subscriptionId: string): Promise<StoredSubscription | undefined> {
    const out = await this.db.send(
      new GetItemCommand({ TableName: this.table, Key: { pk: { S: subPk(subscriptionId) }, sk: { S: 'SUB' } }, ConsistentRead: true }),
    );
    return out.Item ? subscriptionOf(out.Item) : undefined;
  }

  /** Every subscription (of one partner when given), ordered by partner then id. */
  async listSubscriptions(partnerId?: string): Promise<Subscription[]> {
    const found: Subscription[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: BY_LIST,
          KeyConditionExpression: partnerId === undefined ? 'listPk = :pk' : 'listPk = :pk AND begins_with(listSk, :partner)',
          ExpressionAttributeValues: { ':pk': { S: SUBSCRIPTIONS }, ...(partnerId === undefined ? {} : { ':partner': { S: `${partnerId}#` } }) },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) found.push(subscriptionOf(item).subscription);
      start = out.LastEvaluatedKey;
    } while (start);
    return found;
  }

  /** Enables or disables; false when there is no such subscription. */
  async setEnabled(subscriptionId: string, enabled: boolean, reason: Subscription['disabledReason'] | undefined, now: Date): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { pk: { S: subPk(subscriptionId) }, sk: { S: 'SUB' } },
          UpdateExpression: enabled
            ? 'SET enabled = :enabled, updatedAt = :now REMOVE disabledReason'
            : 'SET enabled = :enabled, updatedAt = :now, disabledReason = :reason',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: {
            ':enabled': { BOOL: enabled },
            ':now': { S: now.toISOString() },
            ...(enabled ? {} : { ':reason': { S: reason ?? 'operator' } }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** Deletes the subscription (its delivery log stays until it expires); false when there was none. */
  async removeSubscription(subscriptionId: string): Promise<boolean> {
    try {
      await this.db.send(
        new DeleteItemCommand({
          TableName: this.table,
          Key: { pk: { S: subPk(subscriptionId) }, sk: { S: 'SUB' } },
          ConditionExpression: 'attribute_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  // ------------------------------------------------------------------ deliveries

  /** Writes a new delivery (state pending); false when this delivery id exists already. */
  async createDelivery(delivery: Delivery): Promise<boolean> {
    const created = new Date(delivery.createdAt);
    try {
      await this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall(
            {
              pk: deliveryPk(delivery.deliveryId),
              sk: 'DELIVERY',
              listPk: `${subPk(delivery.subscriptionId)}#DELIVERIES`,
              listSk: `${delivery.createdAt}#${delivery.deliveryId}`,
              ...delivery,
              event: JSON.stringify(delivery.event),
              expiresAt: expiry(created),
            },
            { removeUndefinedValues: true },
          ),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async getDelivery(deliveryId: string): Promise<(Delivery & { queuedAt?: string }) | undefined> {
    const out = await this.db.send(
      new GetItemCommand({ TableName: this.table, Key: { pk: { S: deliveryPk(deliveryId) }, sk: { S: 'DELIVERY' } }, ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const queuedAt = out.Item.queuedAt?.S;
    return { ...deliveryOf(out.Item), ...(queuedAt ? { queuedAt } : {}) };
  }

  /** The delivery's message is on the deliveries queue. */
  async markQueued(deliveryId: string, now: Date): Promise<void> {
    await this.db.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: { pk: { S: deliveryPk(deliveryId) }, sk: { S: 'DELIVERY' } },
        UpdateExpression: 'SET queuedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': { S: now.toISOString() } },
      }),
    );
  }

  /** A manual redelivery: back to pending (any state), so the worker sends it again. False when unknown. */
  async reopenDelivery(deliveryId: string, now: Date): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { pk: { S: deliveryPk(deliveryId) }, sk: { S: 'DELIVERY' } },
          UpdateExpression: 'SET #state = :pending, queuedAt = :now, expiresAt = :expires REMOVE nextAttemptAt',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':pending': { S: 'pending' }, ':now': { S: now.toISOString() }, ':expires': { N: String(expiry(now)) } },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /**
   * Takes the next attempt number (atomic counter) and a send lease until `leaseUntil`, so two
   * queue messages for one delivery (SQS delivers at least once; a notification fanned out twice)
   * never post it twice at the same time, and one that was delivered is never posted again.
   * undefined: the delivery is already delivered or another worker holds an unexpired lease.
   */
  async claimAttempt(deliveryId: string, now: Date, leaseUntil: Date): Promise<number | undefined> {
    try {
      const out = await this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { pk: { S: deliveryPk(deliveryId) }, sk: { S: 'DELIVERY' } },
          UpdateExpression: 'SET leaseUntil = :until ADD attempts :one',
          ConditionExpression: 'attribute_exists(pk) AND #state <> :delivered AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':one': { N: '1' },
            ':until': { S: leaseUntil.toISOString() },
            ':now': { S: now.toISOString() },
            ':delivered': { S: 'delivered' },
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(out.Attributes?.attempts?.N ?? '1');
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  /** Appends one attempt to the log and sets the delivery's state from it. */
  async recordAttempt(attempt: DeliveryAttempt, state: DeliveryState): Promise<void> {
    const at = new Date(attempt.at);
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall(
          { pk: deliveryPk(attempt.deliveryId), sk: attemptSk(attempt.attempt), ...attempt, expiresAt: expiry(at) },
          { removeUndefinedValues: true },
        ),
      }),
    );
    const values: Record<string, AttributeValue> = { ':state': { S: state }, ':at': { S: attempt.at } };
    let update = 'SET #state = :state, lastAttemptAt = :at';
    if (attempt.httpStatus !== undefined) {
      update += ', lastHttpStatus = :status';
      values[':status'] = { N: String(attempt.httpStatus) };
    }
    if (attempt.nextAttemptAt) {
      update += ', nextAttemptAt = :next';
      values[':next'] = { S: attempt.nextAttemptAt };
    } else {
      update += ' REMOVE nextAttemptAt';
    }
    // the attempt is over: its send lease ends with it
    update += update.includes(' REMOVE ') ? ', leaseUntil' : ' REMOVE leaseUntil';
    await this.db.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: { pk: { S: deliveryPk(attempt.deliveryId) }, sk: { S: 'DELIVERY' } },
        UpdateExpression: update,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: values,
      }),
    );
  }

  /** Sets the state without an attempt (e.g. skipped: the subscription is gone or disabled, or the partner may not hear of the result), with why. */
  async setDeliveryState(deliveryId: string, state: DeliveryState, reason?: string): Promise<void> {
    await this.db.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: { pk: { S: deliveryPk(deliveryId) }, sk: { S: 'DELIVERY' } },
        UpdateExpression: reason ? 'SET #state = :state, skippedReason = :reason' : 'SET #state = :state',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':state': { S: state }, ...(reason ? { ':reason': { S: reason } } : {}) },
      }),
    );
  }

  /** A subscription's most recent deliveries (newest first), each with its attempts in order. */
  async listDeliveries(subscriptionId: string, limit: number): Promise<Array<{ delivery: Delivery; attempts: DeliveryAttempt[] }>> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: BY_LIST,
        KeyConditionExpression: 'listPk = :pk',
        ExpressionAttributeValues: { ':pk': { S: `${subPk(subscriptionId)}#DELIVERIES` } },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    const deliveries: Array<{ delivery: Delivery; attempts: DeliveryAttempt[] }> = [];
    for (const item of out.Items ?? []) {
      const id = item.deliveryId?.S;
      if (!id) continue;
      const fresh = await this.getDelivery(id);
      if (fresh) deliveries.push({ delivery: fresh, attempts: await this.listAttempts(id) });
    }
    return deliveries;
  }

  async listAttempts(deliveryId: string): Promise<DeliveryAttempt[]> {
    const attempts: DeliveryAttempt[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': { S: deliveryPk(deliveryId) }, ':prefix': { S: 'ATTEMPT#' } },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) attempts.push(attemptOf(item));
      start = out.LastEvaluatedKey;
    } while (start);
    return attempts;
  }
}
