/**
 * Owed notifications sharded over PENDING_SHARDS partitions (issue 31 item 3), on the local stack
 * (dynalite, fauxqs, the KMS server; real calls): lab results submitted while the notifications
 * queue is down (the only injected fault) leave their notification markers (issue 31 item 2) in
 * NOTIFY#PENDING#<nn> partitions chosen by their version id; the scheduled retry finds every one,
 * and versions of the older layout (the version item itself in the byPatient index, in its shard or
 * in the unsharded NOTIFY#PENDING of the release before sharding) are still retried.
 */
import { DynamoDBClient, QueryCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { dynamoDbClient, sqsClient } from '../../lib/aws/clients';
import type { LocalStack } from '../../lib/local/stack';
import { NotificationLedger, PENDING_PARTITION, PENDING_READ_CONCURRENCY, PENDING_SHARDS, pendingPartitionFor } from '../../lib/results/notification-ledger';
import { toOlderLayout } from '../support/lab-result-layouts';
import { retryPendingNotifications } from '../../lib/results/retry';
import { resultNotifier } from '../../lib/results/result-wiring';
import type { ResultNotification } from '../../lib/results/notifications';
import { call, startTestStack } from '../support/local-stack';
import { labBody } from '../support/lab-bodies';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  jest.restoreAllMocks();
  await stack?.close();
});
afterEach(() => jest.restoreAllMocks());

/** The notifications queue refuses every send (the injected fault); everything else is real. */
function queueDown() {
  const client = sqsClient() as unknown as { send: (...args: unknown[]) => Promise<unknown> };
  const original = client.send.bind(client);
  return jest.spyOn(client, 'send').mockImplementation((...args: unknown[]) => {
    const name = (args[0] as { constructor: { name: string } }).constructor.name;
    if (name === SendMessageCommand.name || name === SendMessageBatchCommand.name)
      return Promise.reject(Object.assign(new Error('injected fault'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }));
    return original(...args);
  });
}

/** A client of the local stack's DynamoDB that records the most Queries it had open at once (observes only). */
function countingOpenQueries(local: LocalStack): { db: DynamoDBClient; maxOpen: () => number } {
  const db = new DynamoDBClient({ endpoint: local.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  let open = 0;
  let most = 0;
  db.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'QueryCommand') return next(args);
      most = Math.max(most, ++open);
      try {
        return await next(args);
      } finally {
        open--;
      }
    },
    { step: 'initialize', name: 'countOpenQueries' },
  );
  return { db, maxOpen: () => most };
}

/** The notification markers (issue 31 item 2: owed notifications of versions are marker items in the base table). */
async function markerItems(): Promise<Array<Record<string, AttributeValue>>> {
  const items: Array<Record<string, AttributeValue>> = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await dynamoDbClient().send(new ScanCommand({ TableName: stack.tables.results, ExclusiveStartKey: start, ConsistentRead: true }));
    for (const item of out.Items ?? []) if (item.pk?.S?.startsWith('NOTIFY#PENDING')) items.push(item);
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The version ids of a set of marker items (sk `<resultId>#<versionId>`). */
const versionIdsOf = (markers: Array<Record<string, AttributeValue>>) => markers.map((m) => m.sk!.S!.split('#')[1]!);

async function drainNotifications(): Promise<ResultNotification[]> {
  const out: ResultNotification[] = [];
  for (;;) {
    const got = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: stack.queues.notifications.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!got.Messages?.length) return out;
    for (const m of got.Messages) out.push(JSON.parse(m.Body!) as ResultNotification);
  }
}

describe('pending notifications over shards', () => {
  const SUBMISSIONS = 40;
  const versionIds: string[] = [];

  beforeAll(async () => {
    const down = queueDown();
    for (let i = 0; i < SUBMISSIONS; i++) {
      const res = await call(stack, 'POST', '/receiveTestData', {
        headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
        body: JSON.stringify(labBody()),
      });
      expect(res.status).toBe(200);
      const out = res.json<{ version: string; notification: string }>();
      expect(out.notification).toBe('pending');
      versionIds.push(out.version);
    }
    down.mockRestore();
    await drainNotifications();
  });

  it('writes each owed notification as a marker in the shard of its version id, spread over the shards', async () => {
    const markers = await markerItems();
    expect(versionIdsOf(markers).sort()).toEqual([...versionIds].sort());
    for (const [i, marker] of markers.entries()) {
      expect(marker.pk!.S).toBe(pendingPartitionFor(versionIdsOf(markers)[i]!));
      expect(marker.pk!.S).toMatch(/^NOTIFY#PENDING#\d{2}$/);
    }
    // 40 ids (HMACs under this stack's key) over 32 shards land on about 23 of them; fewer than 12 has
    // a chance far below one in a million, one partition (as before sharding) none
    expect(new Set(markers.map((i) => i.pk!.S)).size).toBeGreaterThanOrEqual(12);
    expect(new Set(versionIds.map(pendingPartitionFor)).size).toBeLessThanOrEqual(PENDING_SHARDS);
    // the versions themselves are not in the byPatient index (their items never change after the put)
    const indexed = await dynamoDbClient().send(
      new QueryCommand({
        TableName: stack.tables.results,
        IndexName: 'byPatient',
        KeyConditionExpression: 'patientPk = :pk',
        ExpressionAttributeValues: { ':pk': { S: markers[0]!.pk!.S! } },
      }),
    );
    expect(indexed.Items).toEqual([]);
  });

  it('the retry finds every shard and versions of the older layout (sharded index and the unsharded NOTIFY#PENDING), and sends each once', async () => {
    // one version as the release before issue 31 item 2 wrote it, in the unsharded NOTIFY#PENDING index partition, another in its index shard
    const ledger = new NotificationLedger(dynamoDbClient(), stack.tables.results);
    const legacyIds = versionIds.slice(SUBMISSIONS - 2);
    for (const [n, versionId] of legacyIds.entries()) {
      const marker = (await markerItems()).find((m) => m.sk!.S!.endsWith(`#${versionId}`))!;
      const resultId = marker.sk!.S!.split('#')[0]!;
      await toOlderLayout(
        stack,
        resultId,
        marker.versionSk!.S!,
        n === 0 ? PENDING_PARTITION : pendingPartitionFor(versionId),
        new Date('2026-01-01T00:00:00Z'),
      );
    }
    const legacyIndexed = await dynamoDbClient().send(
      new QueryCommand({
        TableName: stack.tables.results,
        IndexName: 'byPatient',
        KeyConditionExpression: 'patientPk = :pk',
        ExpressionAttributeValues: { ':pk': { S: PENDING_PARTITION } },
      }),
    );
    expect(legacyIndexed.Items?.map((i) => i.versionId?.S)).toEqual([legacyIds[0]]);
    expect(versionIdsOf(await markerItems())).not.toContain(legacyIds[0]);

    const later = new Date(Date.now() + 10 * 60 * 1000);
    // a page of 25: the versions of the older layout first, then markers
    const page = await ledger.pendingNotifications(later, 25);
    expect(page).toHaveLength(25);
    expect(
      page
        .slice(0, 2)
        .map((v) => v.versionId)
        .sort(),
    ).toEqual([...legacyIds].sort());
    expect(page.slice(0, 2).map((v) => v.notificationLedger)).toEqual(['version-item', 'version-item']);
    expect(page.slice(2).every((v) => v.notificationLedger === 'marker')).toBe(true);
    const all = await ledger.pendingNotifications(later, 100);
    expect(all.map((v) => v.versionId).sort()).toEqual([...versionIds].sort());
    expect(page.map((v) => v.versionId)).toEqual(all.slice(0, 25).map((v) => v.versionId));
    // the job's shard reads are bounded: never more than PENDING_READ_CONCURRENCY Queries open, the same versions
    const counted = countingOpenQueries(stack);
    try {
      const bounded = await new NotificationLedger(counted.db, stack.tables.results).pendingNotifications(later, 100);
      expect(bounded.map((v) => v.versionId)).toEqual(all.map((v) => v.versionId));
      expect(counted.maxOpen()).toBe(PENDING_READ_CONCURRENCY);
    } finally {
      counted.db.destroy();
    }
    // nothing is due before its next attempt (each submission backed off by a minute at least)
    expect(await ledger.pendingNotifications(new Date('2025-12-31T00:00:00Z'), 100)).toEqual([]);

    const summary = await retryPendingNotifications({ store: ledger, notifier: resultNotifier() }, { now: () => later, remainingMs: () => 60_000 });
    expect(summary).toMatchObject({ due: SUBMISSIONS, sent: SUBMISSIONS, failed: 0 });
    const sent = await drainNotifications();
    expect(sent.map((n) => n.versionId).sort()).toEqual([...versionIds].sort());
    expect(await markerItems()).toEqual([]);
    // sent: a second run finds nothing
    expect(await ledger.pendingNotifications(later, 100)).toEqual([]);
    const legacyAfter = await dynamoDbClient().send(
      new QueryCommand({
        TableName: stack.tables.results,
        IndexName: 'byPatient',
        KeyConditionExpression: 'patientPk = :pk',
        ExpressionAttributeValues: { ':pk': { S: PENDING_PARTITION } },
      }),
    );
    expect(legacyAfter.Items).toEqual([]);
  });
});
