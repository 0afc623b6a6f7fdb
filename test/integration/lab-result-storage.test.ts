/**
 * The results table since issue 31 item 2, on the local stack (dynalite, fauxqs, the KMS server;
 * real calls, mocks only to inject faults): the notification marker's lifecycle (owed, then sent;
 * a crash before the send leaves it owed and the retry sends it once; a marker whose version was
 * never stored is taken away), version items never rewritten after their PutItem, resends, the
 * sealed records (compressed, encrypted, binary), and items of the older layout still read by every
 * reader and still retried.
 */
import { GetItemCommand, QueryCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { dynamoDbClient, kmsClient, sqsClient } from '../../lib/aws/clients';
import { EnvelopeEncryptor } from '../../lib/crypto/envelope';
import type { LocalStack } from '../../lib/local/stack';
import { NotificationLedger, notificationMarkerKey } from '../../lib/results/notification-ledger';
import type { ResultNotification } from '../../lib/results/notifications';
import { retryPendingNotifications } from '../../lib/results/retry';
import { LAB_RESULT_KEY_PURPOSE } from '../../lib/results/result-store';
import { labResultStore, receiveDependencies, resultNotifier } from '../../lib/results/result-wiring';
import { receiveLabResult } from '../../lib/results/receive';
import { openRecord, sealRecord, SEALED_FORMAT_DEFLATE } from '../../lib/results/sealed-record';
import { call, startTestStack } from '../support/local-stack';
import { labBody, unique } from '../support/lab-bodies';
import { pointerToOlderLayout, sentVersionToOlderLayout } from '../support/lab-result-layouts';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  jest.restoreAllMocks();
  await stack?.close();
});
afterEach(() => jest.restoreAllMocks());

type Item = Record<string, AttributeValue>;
const GRACE_PASSED = () => new Date(Date.now() + 3 * 60 * 1000);

interface Success {
  resultId: string;
  version: string;
  duplicate: boolean;
  current: boolean;
  notification: 'sent' | 'pending';
}

async function post(body: unknown, headers: Record<string, string> = {}) {
  return call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function getItem(pk: string, sk: string): Promise<Item | undefined> {
  return (await dynamoDbClient().send(new GetItemCommand({ TableName: stack.tables.results, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true })))
    .Item;
}

async function versionItems(resultId: string): Promise<Item[]> {
  const out = await dynamoDbClient().send(
    new QueryCommand({
      TableName: stack.tables.results,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :v)',
      ExpressionAttributeValues: { ':pk': { S: `RESULT#${resultId}` }, ':v': { S: 'VERSION#' } },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

const markerOf = (resultId: string, versionId: string) => {
  const { pk, sk } = notificationMarkerKey(resultId, versionId);
  return getItem(pk, sk);
};

async function allMarkers(): Promise<Item[]> {
  const out = await dynamoDbClient().send(new ScanCommand({ TableName: stack.tables.results, ConsistentRead: true }));
  return (out.Items ?? []).filter((i) => i.pk?.S?.startsWith('NOTIFY#PENDING'));
}

/** Notifications on the queue (drained), by version id. */
async function drainNotifications(): Promise<ResultNotification[]> {
  const out: ResultNotification[] = [];
  for (;;) {
    const got = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: stack.queues.notifications.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!got.Messages?.length) return out;
    for (const m of got.Messages) out.push(JSON.parse(m.Body!) as ResultNotification);
    await sqsClient().send(
      new DeleteMessageBatchCommand({
        QueueUrl: stack.queues.notifications.url,
        Entries: got.Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
}

/** Records every DynamoDB write command (name and key) the service sends while `run` runs. */
async function writesDuring<T>(run: () => Promise<T>): Promise<{ result: T; writes: Array<{ command: string; pk: string; sk: string }> }> {
  const client = dynamoDbClient() as unknown as { send: (...args: unknown[]) => Promise<unknown> };
  const original = client.send.bind(client);
  const writes: Array<{ command: string; pk: string; sk: string }> = [];
  jest.spyOn(client, 'send').mockImplementation((...args: unknown[]) => {
    const command = args[0] as { constructor: { name: string }; input: { TableName?: string; Key?: Item; Item?: Item } };
    const name = command.constructor.name;
    if (['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand'].includes(name) && command.input.TableName === stack.tables.results) {
      const key = command.input.Key ?? command.input.Item!;
      writes.push({ command: name, pk: key.pk!.S!, sk: key.sk!.S! });
    }
    return original(...args);
  });
  try {
    return { result: await run(), writes };
  } finally {
    jest.restoreAllMocks();
  }
}

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

const retry = (now: Date) =>
  retryPendingNotifications(
    { store: new NotificationLedger(dynamoDbClient(), stack.tables.results), notifier: resultNotifier() },
    { now: () => now, remainingMs: () => 60_000 },
  );

beforeAll(async () => {
  // warm up: the lookup key exists, a data key is cached
  expect((await post(labBody())).status).toBe(200);
  await drainNotifications();
});

describe('the notification marker', () => {
  it('is written before the version and taken away once the notification is sent; the version item is written once and never touched again', async () => {
    const { result: res, writes } = await writesDuring(() => post(labBody()));
    expect(res.status).toBe(200);
    const out = res.json<Success>();
    expect(out).toMatchObject({ notification: 'sent', current: true, duplicate: false });
    const marker = notificationMarkerKey(out.resultId, out.version);
    const [version] = await versionItems(out.resultId);
    expect(
      writes.map((w) => `${w.command} ${w.pk === marker.pk && w.sk === marker.sk ? 'marker' : w.sk === 'CURRENT' ? 'pointer' : w.sk.split('#')[0]}`),
    ).toEqual(['PutItemCommand marker', 'PutItemCommand VERSION', 'UpdateItemCommand pointer', 'DeleteItemCommand marker']);
    expect(await markerOf(out.resultId, out.version)).toBeUndefined();
    // nothing on the version item says anything about the notification: it is exactly what the PutItem wrote
    expect(Object.keys(version!).sort()).toEqual(
      ['patientKey', 'patientMatched', 'partnerId', 'keyId', 'pk', 'receivedAt', 'senderId', 'sk', 'sourceMessageId', 'status', 'submission'].sort(),
    );
    expect((await labResultStore().listVersions(out.resultId))[0]).toMatchObject({ notificationState: 'sent', notificationAttempts: 0 });
    expect((await drainNotifications()).filter((n) => n.versionId === out.version)).toHaveLength(1);
  });

  it('a crash after the pointer and before the send leaves the notification owed; the retry sends it once, after the grace period', async () => {
    // the request's own steps up to the crash: save (marker, version), pointer; then the process is gone
    const body = labBody();
    const deps = receiveDependencies();
    let reached!: () => void;
    const atPublish = new Promise<void>((resolve) => (reached = resolve));
    const crashing = {
      ...deps,
      notifier: {
        publish: () => {
          reached();
          return new Promise<void>(() => undefined); // the process is gone: the publish never happens
        },
      } as unknown as typeof deps.notifier,
    };
    const principal = { partnerId: 'demo-lab', keyId: 'crash-key', allowedSenderIds: ['demo-lab'] } as unknown as Parameters<
      typeof receiveLabResult
    >[0]['principal'];
    void receiveLabResult({ body, principal, requestId: unique('crash'), requestIdSupplied: false, now: new Date() }, crashing);
    await atPublish;
    const markers = await allMarkers();
    expect(markers).toHaveLength(1);
    const [resultId, versionId] = markers[0]!.sk!.S!.split('#') as [string, string];
    expect((await labResultStore().listVersions(resultId))[0]).toMatchObject({ versionId, notificationState: 'pending' });
    expect(await labResultStore().currentVersionId(resultId)).toBe(versionId);

    // not yet due: the request might still be about to send it
    expect((await retry(new Date())).due).toBe(0);
    const later = GRACE_PASSED();
    expect(await retry(later)).toMatchObject({ due: 1, sent: 1, failed: 0 });
    expect(await markerOf(resultId, versionId)).toBeUndefined();
    expect(await retry(later)).toMatchObject({ due: 0, sent: 0 });
    expect((await drainNotifications()).filter((n) => n.versionId === versionId)).toHaveLength(1);
    expect((await labResultStore().listVersions(resultId))[0]).toMatchObject({ notificationState: 'sent' });
  });

  it('a failed publish moves the due time on the marker (one UpdateItem) and the retry sends it', async () => {
    const down = queueDown();
    const res = await post(labBody());
    down.mockRestore();
    const out = res.json<Success>();
    expect(out.notification).toBe('pending');
    const marker = (await markerOf(out.resultId, out.version))!;
    expect(marker.attempts!.N).toBe('1');
    expect(marker.lastNotificationError!.S).toBe('ServiceUnavailable');
    expect((await labResultStore().listVersions(out.resultId))[0]).toMatchObject({ notificationState: 'pending', notificationAttempts: 1 });
    expect(await retry(GRACE_PASSED())).toMatchObject({ sent: 1 });
    expect(await markerOf(out.resultId, out.version)).toBeUndefined();
    expect((await drainNotifications()).filter((n) => n.versionId === out.version)).toHaveLength(1);
  });

  it('a crash between the marker and the version leaves nothing visible; the retry takes the marker away and sends nothing', async () => {
    const client = dynamoDbClient() as unknown as { send: (...args: unknown[]) => Promise<unknown> };
    const original = client.send.bind(client);
    jest.spyOn(client, 'send').mockImplementation((...args: unknown[]) => {
      const command = args[0] as { constructor: { name: string }; input: { Item?: Item } };
      if (command.constructor.name === 'PutItemCommand' && command.input.Item?.sk?.S?.startsWith('VERSION#'))
        return Promise.reject(Object.assign(new Error('injected fault'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }));
      return original(...args);
    });
    const body = labBody();
    const res = await post(body);
    jest.restoreAllMocks();
    expect(res.status).toBe(503);
    const orphans = await allMarkers();
    expect(orphans).toHaveLength(1);
    const resultId = orphans[0]!.sk!.S!.split('#')[0]!;
    expect(await versionItems(resultId)).toEqual([]);
    expect(await labResultStore().currentVersionId(resultId)).toBeUndefined();

    expect(await retry(GRACE_PASSED())).toMatchObject({ due: 0, sent: 0 });
    expect(await allMarkers()).toEqual([]);
    expect(await drainNotifications()).toEqual([]);
  });
});

describe('resends of the same submission', () => {
  it('after the notification was sent: duplicate, nothing new written to stay, no second notification', async () => {
    const body = labBody();
    const first = (await post(body)).json<Success>();
    await drainNotifications();
    const again = await post(body);
    expect(again.json<Success>()).toMatchObject({ version: first.version, duplicate: true, notification: 'sent', current: true });
    expect(await versionItems(first.resultId)).toHaveLength(1);
    expect(await markerOf(first.resultId, first.version)).toBeUndefined();
    expect(await drainNotifications()).toEqual([]);
  });

  it('while the notification is owed: the resend sends it and takes the marker away', async () => {
    const body = labBody();
    const down = queueDown();
    const first = (await post(body)).json<Success>();
    down.mockRestore();
    expect(first.notification).toBe('pending');
    const again = (await post(body)).json<Success>();
    expect(again).toMatchObject({ version: first.version, duplicate: true, notification: 'sent' });
    expect(await markerOf(first.resultId, first.version)).toBeUndefined();
    expect((await drainNotifications()).filter((n) => n.versionId === first.version)).toHaveLength(1);
  });
});

describe('sealed records', () => {
  const context = { recordType: 'lab-result', sender: 'demo-lab', resultId: 'lr_1', versionId: 'lv_1' };
  const keyContext = { purpose: LAB_RESULT_KEY_PURPOSE, service: 'interop' };
  const encryptor = () => new EnvelopeEncryptor({ kms: kmsClient(), keyId: stack.kmsKeyId, purpose: LAB_RESULT_KEY_PURPOSE });

  it('round-trips any text (compressed, then encrypted; binary), and compresses what repeats', async () => {
    const writer = encryptor();
    for (const text of [
      '',
      '{"a":"ü 漢字 🧪"}',
      JSON.stringify({ results: Array.from({ length: 200 }, (_, i) => ({ testName: `Test ${i}`, result: String(i) })) }),
    ]) {
      const sealed = await sealRecord(writer, text, context, keyContext);
      expect(sealed[0]).toBe(SEALED_FORMAT_DEFLATE);
      // a fresh reader: the data key comes back through KMS Decrypt
      expect((await openRecord(encryptor(), sealed, context, keyContext)).toString('utf8')).toBe(text);
      if (text.length > 1000) expect(sealed.length).toBeLessThan(text.length / 3);
    }
  });

  it('keeps the data key context when it is not the implied one, leaves it out when it is', async () => {
    const other = new EnvelopeEncryptor({ kms: kmsClient(), keyId: stack.kmsKeyId, purpose: 'other-purpose' });
    const explicit = await sealRecord(other, 'x', context, keyContext);
    const implied = await sealRecord(encryptor(), 'x', context, keyContext);
    expect(explicit.length).toBeGreaterThan(implied.length);
    expect((await openRecord(other, explicit, context, keyContext)).toString()).toBe('x');
    expect((await openRecord(other, explicit, context)).toString()).toBe('x');
    await expect(openRecord(encryptor(), implied, context)).rejects.toMatchObject({ name: 'EnvelopeDecryptError', reason: 'malformed' });
  });

  it('refuses an unknown format, a truncated record and a flipped byte', async () => {
    const sealed = await sealRecord(encryptor(), 'hello', context, keyContext);
    const unknown = Buffer.from(sealed);
    unknown[0] = 0x7f;
    await expect(openRecord(encryptor(), unknown, context, keyContext)).rejects.toMatchObject({ reason: 'unsupported-version' });
    await expect(openRecord(encryptor(), sealed.subarray(0, 40), context, keyContext)).rejects.toMatchObject({ reason: 'malformed' });
    const flipped = Buffer.from(sealed);
    flipped[flipped.length - 2] ^= 0x10;
    await expect(openRecord(encryptor(), flipped, context, keyContext)).rejects.toMatchObject({ reason: 'authentication-failed' });
  });
});

describe('items of the older layout (before issue 31 item 2)', () => {
  it('read as before by every store reader, and a newer version replaces the older pointer without stale copies', async () => {
    const body = labBody({ patientID: 'demo-patient-1', accessionNumber: unique('ACC-OLD') });
    const out = (await post(body)).json<Success>();
    await drainNotifications();
    const store = labResultStore();
    const before = {
      current: await store.readCurrent(out.resultId),
      versions: await store.listVersions(out.resultId),
      summaries: (await store.recentResultsForPatient('demo-patient-1', 1000)).filter((s) => s.resultId === out.resultId),
      one: await store.currentSummaryForPatient('demo-patient-1', out.resultId),
    };
    const versionSk = (await versionItems(out.resultId))[0]!.sk!.S!;
    await sentVersionToOlderLayout(stack, out.resultId, versionSk);
    await pointerToOlderLayout(stack, out.resultId);
    const [older] = await versionItems(out.resultId);
    expect(older!.envelope?.S).toBeDefined();
    expect(older!.submission).toBeUndefined();
    expect((await getItem(`RESULT#${out.resultId}`, 'CURRENT'))!.summary!.S).toBeDefined();

    expect(await store.readCurrent(out.resultId)).toEqual(before.current);
    expect(await store.readVersion(out.resultId, out.version)).toEqual(before.current);
    expect(await store.listVersions(out.resultId)).toEqual(before.versions);
    expect((await store.recentResultsForPatient('demo-patient-1', 1000)).filter((s) => s.resultId === out.resultId)).toEqual(before.summaries);
    expect(await store.currentSummaryForPatient('demo-patient-1', out.resultId)).toEqual(before.one);
    expect(before.summaries).toHaveLength(1);

    // a corrected version: the older pointer moves to it and keeps none of its repeated attributes
    const corrected = (
      await post({ data: { ...body.data, status: 'corrected', results: { testName: 'Glucose', result: '99', units: 'mg/dL' } } })
    ).json<Success>();
    expect(corrected.current).toBe(true);
    const pointer = (await getItem(`RESULT#${out.resultId}`, 'CURRENT'))!;
    expect(pointer.summary!.B).toBeDefined();
    for (const stale of ['kind', 'resultId', 'status', 'resultedAtKey', 'updatedAt']) expect(pointer[stale]).toBeUndefined();
    expect((await store.recentResultsForPatient('demo-patient-1', 1000)).find((s) => s.resultId === out.resultId)).toMatchObject({
      versionId: corrected.version,
      status: 'corrected',
      results: [{ testName: 'Glucose', result: '99', units: 'mg/dL' }],
    });
    expect((await store.listVersions(out.resultId)).map((v) => [v.versionId, v.notificationState])).toEqual(
      expect.arrayContaining([
        [out.version, 'sent'],
        [corrected.version, 'sent'],
      ]),
    );
  });
});
