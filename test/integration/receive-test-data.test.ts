/**
 * POST /receiveTestData against the local stack (dynalite, fauxqs SQS + S3, local KMS), through
 * the local API Gateway and the real authorizer. Mocks only inject faults (jest spies on the
 * shared SDK clients).
 */
import { ConflictError, RequestInProgressError } from '../../lib/domain-errors';
import { randomBytes } from 'node:crypto';
import { QueryCommand, ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { EnvelopeEncryptor } from '../../lib/crypto/envelope';
import { dynamoDbClient, kmsClient, s3Client, sqsClient } from '../../lib/aws/clients';
import type { LocalStack } from '../../lib/local/stack';
import { lambdaContext } from '../../lib/local/lambda-context';
import { IdempotencyStore, LEASE_MS } from '../../lib/results/idempotency';
import type { ResultNotification } from '../../lib/results/notifications';
import { LAB_RESULT_KEY_PURPOSE, RECORD_TYPES } from '../../lib/results/result-store';
import { openRecord, SEALED_FORMAT_DEFLATE } from '../../lib/results/sealed-record';
import { labResultStore } from '../../lib/results/result-wiring';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/http/body-limit';
import { call, startTestStack, type HttpResult } from '../support/local-stack';
import { labBody, unique } from '../support/lab-bodies';
import { handler as retryHandler } from '../../functions/retryResultNotifications';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  jest.restoreAllMocks();
  await stack?.close();
});
afterEach(() => jest.restoreAllMocks());

type Json = Record<string, unknown>;

async function post(body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function expectCommonHeaders(res: HttpResult) {
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(Number(res.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
  expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
  expect(res.headers.get('cache-control')).toBe('no-store');
}

const db = (): DynamoDBClient => dynamoDbClient();

async function scanAll(table: string): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await db().send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

async function versionItems(resultId: string): Promise<Record<string, AttributeValue>[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: stack.tables.results,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :v)',
      ExpressionAttributeValues: { ':pk': { S: `RESULT#${resultId}` }, ':v': { S: 'VERSION#' } },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

/** Everything the results and idempotency tables and the documents bucket hold, as text. */
async function everythingStored(): Promise<string> {
  const parts: string[] = [];
  for (const table of [stack.tables.results, stack.tables.idempotency]) {
    for (const item of await scanAll(table)) {
      parts.push(JSON.stringify(item, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v)));
    }
  }
  let token: string | undefined;
  do {
    const list = await s3Client().send(new ListObjectsV2Command({ Bucket: stack.bucket, ContinuationToken: token }));
    for (const object of list.Contents ?? []) {
      parts.push(object.Key!);
      const got = await s3Client().send(new GetObjectCommand({ Bucket: stack.bucket, Key: object.Key! }));
      parts.push(await got.Body!.transformToString('utf8'));
    }
    token = list.NextContinuationToken;
  } while (token);
  return parts.join('\n');
}

const notifications: Array<{ raw: string; body: ResultNotification }> = [];
async function drainQueue(): Promise<void> {
  for (;;) {
    const out = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: stack.queues.notifications.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return;
    for (const m of messages) notifications.push({ raw: m.Body!, body: JSON.parse(m.Body!) as ResultNotification });
    await sqsClient().send(
      new DeleteMessageBatchCommand({
        QueueUrl: stack.queues.notifications.url,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
}
async function notificationsFor(versionId: string, waitMs = 3000): Promise<Array<{ raw: string; body: ResultNotification }>> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    await drainQueue();
    const found = notifications.filter((n) => n.body.versionId === versionId);
    if (found.length > 0 || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Rejects the commands `match` selects with a retryable AWS-style error; passes everything else through. */
function failCommands(client: object, match: (command: { constructor: { name: string }; input: Json }) => boolean, name = 'ThrottlingException') {
  const target = client as { send: (...args: unknown[]) => Promise<unknown> };
  const original = target.send.bind(target);
  return jest.spyOn(target, 'send').mockImplementation((...args: unknown[]) => {
    const command = args[0] as { constructor: { name: string }; input: Json };
    if (match(command)) return Promise.reject(Object.assign(new Error('injected fault'), { name, $metadata: { httpStatusCode: 400 } }));
    return original(...args);
  });
}

interface Success {
  status: string;
  message: string;
  requestId: string;
  resultId: string;
  version: string;
  current: boolean;
  duplicate: boolean;
  notification: string;
}

describe('POST /receiveTestData: storage', () => {
  const phi = {
    patientID: 'demo-patient-2',
    accessionNumber: `ACCPHI-${randomBytes(4).toString('hex')}`,
    recordNo: `REC-${randomBytes(4).toString('hex')}`,
    testName: 'Hemoglobin A1c QZXV',
    result: '6.9 QZXV-result',
    referenceRange: '4.0-5.6 QZXV-range',
    reportName: 'zebra-jane-report.txt',
    reportText: 'Patient Jane Q. Zebra, DOB 1970-01-01, narrative QZXV',
    extra: 'Dr. Quentin Zebra-Ordering',
  };
  let body: Json;
  let res: HttpResult;

  beforeAll(async () => {
    body = labBody(
      {
        patientID: phi.patientID,
        accessionNumber: phi.accessionNumber,
        recordNo: phi.recordNo,
        results: [
          { testName: phi.testName, result: phi.result, units: '%', referenceRange: phi.referenceRange },
          { testName: 'Comment', result: 'see report', units: '' },
        ],
        reports: [{ source: 'text', type: 'narrative', name: phi.reportName, data: phi.reportText }],
        orderingPhysician: phi.extra,
      },
      { meta: { channel: 'lis' } },
    );
    res = await post(body, { 'x-request-id': unique('req-storage') });
  });

  it('answers 200 with the documented body and the common headers', () => {
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.headers.get('content-type')).toBe('application/json');
    const out = res.json<Success>();
    expect(Object.keys(out).sort()).toEqual(['current', 'duplicate', 'message', 'notification', 'requestId', 'resultId', 'status', 'version']);
    expect(out).toMatchObject({
      status: 'success',
      message: 'Encrypted result saved; notifications attempted.',
      requestId: res.headers.get('x-request-id'),
      resultId: expect.stringMatching(/^lr_[0-9a-f]{32}$/),
      version: expect.stringMatching(/^lv_[0-9a-f]{32}$/),
      current: true,
      duplicate: false,
      notification: 'sent',
    });
  });

  it('keeps only ciphertext in DynamoDB and S3: no submitted PHI string anywhere', async () => {
    const stored = await everythingStored();
    expect(stored).toContain(res.json<Success>().resultId); // the scan did see the result
    for (const value of Object.values(phi)) expect(stored).not.toContain(value);
    expect(stored).not.toContain('Zebra');
    expect(stored).not.toContain('QZXV');
  });

  it('decrypts back to exactly the submission, results as an array, status normalised', async () => {
    const out = res.json<Success>();
    const version = await labResultStore().readCurrent(out.resultId);
    expect(version).toBeDefined();
    expect(version!.submission).toEqual(body);
    expect(version!.versionId).toBe(out.version);
    expect(version!.status).toBe('final');
    expect(version!.results).toHaveLength(2);
    const byAccession = await labResultStore().readCurrentByAccession('demo-lab', phi.accessionNumber);
    expect(byAccession?.versionId).toBe(out.version);
  });

  it('stores the submission as a sealed record (compressed, encrypted, binary) whose context is bound: a wrong context fails', async () => {
    const out = res.json<Success>();
    const [item] = await versionItems(out.resultId);
    expect(item!.envelope).toBeUndefined(); // the JSON envelope of the layout before issue 31 item 2
    expect(item!.summary).toBeUndefined(); // the summary lives on the pointer (and on the marker while the notification is owed)
    const sealed = item!.submission!.B!;
    expect(sealed[0]).toBe(SEALED_FORMAT_DEFLATE);
    const context = { recordType: RECORD_TYPES.submission, sender: 'demo-lab', resultId: out.resultId, versionId: out.version };
    const keyContext = { purpose: LAB_RESULT_KEY_PURPOSE, service: 'interop' };

    // a fresh encryptor (no cached keys): the data key comes back through KMS Decrypt
    const reader = new EnvelopeEncryptor({ kms: kmsClient(), keyId: stack.kmsKeyId, purpose: LAB_RESULT_KEY_PURPOSE });
    const plain = JSON.parse((await openRecord(reader, sealed, context, keyContext)).toString('utf8')) as { body: Json };
    expect(plain.body).toEqual(body);

    // the record context is not stored: it is AES-GCM AAD, so reading under another record's context fails authentication
    for (const wrong of [
      { ...context, sender: 'DEMO-LAB-LIS' },
      { ...context, resultId: 'lr_00000000000000000000000000000000' },
      { ...context, recordType: RECORD_TYPES.summary },
    ]) {
      await expect(openRecord(reader, sealed, wrong, keyContext)).rejects.toMatchObject({ name: 'EnvelopeDecryptError', reason: 'authentication-failed' });
    }
    // one flipped ciphertext byte breaks GCM authentication
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 0x01;
    await expect(openRecord(reader, tampered, context, keyContext)).rejects.toMatchObject({ reason: 'authentication-failed' });
  });

  it('publishes a notification with ids and status only', async () => {
    const out = res.json<Success>();
    const found = await notificationsFor(out.version);
    expect(found).toHaveLength(1);
    expect(found[0]!.body).toEqual({
      type: 'lab-result.saved',
      schemaVersion: 1,
      notificationId: out.version,
      resultId: out.resultId,
      versionId: out.version,
      status: 'final',
      senderId: 'demo-lab',
      partnerId: 'demo-lab',
      // filed to a chart patient: every export-scope subscription may hear of it (lib/results/notifications.ts)
      audience: 'export',
    });
    for (const value of Object.values(phi)) expect(found[0]!.raw).not.toContain(value);
    expect(found[0]!.raw).not.toContain('2024-03-01');
  });

  it('summaries for the patient export: LabResultSummary shape, decrypted', async () => {
    const out = res.json<Success>();
    const summaries = await labResultStore({ documents: false }).recentResultsForPatient(phi.patientID, 10);
    const mine = summaries.find((s) => s.resultId === out.resultId);
    expect(mine).toEqual({
      resultId: out.resultId,
      versionId: out.version,
      senderId: 'demo-lab',
      partnerId: 'demo-lab',
      patientMatched: true,
      accessionNumber: phi.accessionNumber,
      status: 'final',
      resultedAt: '2024-03-01T09:30:00Z',
      results: [
        { testName: phi.testName, result: phi.result, units: '%', referenceRange: phi.referenceRange },
        { testName: 'Comment', result: 'see report', units: '' },
      ],
      // issue 27 K6: the summary carries the reports (whole up to 16 KiB) so the summary exports and FHIR carry them
      documents: [{ name: phi.reportName, type: 'narrative', source: 'text', bytes: Buffer.byteLength(phi.reportText), data: phi.reportText }],
    });
    expect(await labResultStore().recentResultsForPatient('no-such-patient', 10)).toEqual([]);
  });
});

describe('POST /receiveTestData: the optional fields of the lab model (issue 27)', () => {
  const order = {
    placerOrderNumber: { id: 'PL-1', namespace: 'EHR-ORDERS' },
    accessionNamespace: 'ACME-LAB',
    universalService: { code: '24323-8', display: 'Comprehensive metabolic panel', system: 'LN' },
    collectedAt: '2024-03-01T08:30-06:00',
    orderingProvider: { id: '1234', name: { family: 'Smith', given: 'John' } },
    orderStatus: 'F',
    specimen: { type: { code: '119297000', display: 'Blood specimen', system: 'SCT' }, collectedAt: '2024-03-01', id: { id: 'SP-1', namespace: 'ACME-LAB' } },
    comments: ['Specimen slightly hemolyzed'],
  };
  const results = [
    {
      testName: 'Potassium',
      result: '6.90',
      units: 'millimole per liter',
      unitsCode: 'mmol/L',
      referenceRange: '3.5-5.1',
      code: '2823-3',
      codeSystem: 'LN',
      alternateCode: { code: 'K', display: 'Potassium serum', system: 'L' },
      valueType: 'NM',
      numericValue: '6.90',
      abnormalFlags: ['HH', 'A'],
      observationStatus: 'F',
      observedAt: '2024-03-01T08:15:00-06:00',
      performingOrganization: 'ACME Reference Lab',
      comments: ['Repeated and confirmed'],
    },
    { testName: 'Creatinine', result: '<0.5', valueType: 'SN', structuredNumeric: { comparator: '<', value1: '0.5' }, observationStatus: 'C' },
    { testName: 'Organism', result: 'E. coli', valueType: 'CWE', codedValue: { code: '112283007', display: 'Escherichia coli', system: 'SCT' } },
    { testName: 'Pathology', result: 'Line one\nLine two', valueType: 'TX', textLines: ['Line one', 'Line two'], observedAt: '2024-03' },
  ];

  it('stores them and gives them back: the version (readCurrent) and the summary the exports read', async () => {
    const patientID = 'demo-patient-2';
    const body = labBody({ patientID, order, results });
    const res = await post(body);
    expect(res.status).toBe(200);
    const out = res.json<Success>();
    const version = await labResultStore().readCurrent(out.resultId);
    expect(version!.submission).toEqual(body);
    expect(version!.order).toEqual(order);
    expect(version!.results).toEqual(results);
    const summaries = await labResultStore({ documents: false }).recentResultsForPatient(patientID, 50);
    const mine = summaries.find((s) => s.resultId === out.resultId);
    expect(mine).toEqual({
      resultId: out.resultId,
      versionId: out.version,
      senderId: 'demo-lab',
      partnerId: 'demo-lab',
      patientMatched: true,
      accessionNumber: (body.data as Json).accessionNumber,
      status: 'final',
      resultedAt: '2024-03-01T09:30:00Z',
      results,
      order,
    });
  });

  it('a body with only the spec fields is stored and answered exactly as before (no order, the spec fields only)', async () => {
    const body = labBody({ results: [{ testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' }] });
    const res = await post(body);
    expect(res.status).toBe(200);
    const out = res.json<Success>();
    expect(Object.keys(out).sort()).toEqual(['current', 'duplicate', 'message', 'notification', 'requestId', 'resultId', 'status', 'version']);
    const version = await labResultStore().readCurrent(out.resultId);
    expect(version).not.toHaveProperty('order');
    expect(version!.results).toEqual([{ testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' }]);
    const summary = (await labResultStore({ documents: false }).recentResultsForPatient('demo-patient-1', 200)).find((s) => s.resultId === out.resultId);
    expect(summary).toEqual({
      resultId: out.resultId,
      versionId: out.version,
      senderId: 'demo-lab',
      partnerId: 'demo-lab',
      patientMatched: true,
      accessionNumber: (body.data as Json).accessionNumber,
      status: 'final',
      resultedAt: '2024-03-01T09:30:00Z',
      results: [{ testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' }],
    });
  });

  it('answers 400 (problem+json) listing every failing optional field, values never echoed', async () => {
    const res = await post(
      labBody({
        order: { ...order, orderStatus: 'Q', collectedAt: '2024-03-01T08:30', extraField: 'QZXV-extra' },
        results: [{ ...results[0], abnormalFlags: ['QZXV'], observedAt: '2999-01-01', comments: ['ok', 'bell\u0007QZXV'] }],
      }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const problem = res.json<{ errors: Array<{ pointer: string; message: string }> }>();
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual(
      [
        '/data/order',
        '/data/order/orderStatus',
        '/data/order/collectedAt',
        '/data/results/0/abnormalFlags/0',
        '/data/results/0/observedAt',
        '/data/results/0/comments/1',
      ].sort(),
    );
    expect(res.text).not.toContain('QZXV');
  });

  it('a result stored with abnormalFlags as a comma-joined string (earlier HL7 intake) is read back as an array', async () => {
    const store = labResultStore();
    const resultId = `lr_${randomBytes(16).toString('hex')}`;
    const versionId = `lv_${randomBytes(16).toString('hex')}`;
    const body = labBody({ results: [{ testName: 'Potassium', result: '6.9', abnormalFlags: 'HH,A', observationStatus: 'F', valueType: 'NM' }] });
    const data = body.data as Json;
    const now = new Date();
    const { version } = await store.saveVersion({
      accepted: {
        body: body as never,
        status: 'final',
        resultedAtKey: '2024-03-01T09:30:00.000000000Z',
        results: data.results as never,
      },
      resultId,
      versionId,
      patientKey: 'PATIENT#legacy-shape-test',
      patientMatched: false,
      partnerId: 'demo-lab',
      keyId: 'test',
      receivedAt: now,
      notificationNotBefore: now,
    });
    await store.ensureCurrent(version, now);
    const read = await store.readCurrent(resultId);
    expect(read!.results).toEqual([{ testName: 'Potassium', result: '6.9', abnormalFlags: ['HH', 'A'], observationStatus: 'F', valueType: 'NM' }]);
    expect(read!.submission).toEqual(body);
  });
});

describe('POST /receiveTestData: data key reuse and timing', () => {
  it('one KMS data key protects many results (cache bounds), measured', async () => {
    const { labResultEncryptor, LAB_RESULT_DATA_KEY_MAX_USES } = await import('../../lib/results/result-wiring');
    labResultEncryptor().clearCache();
    const kms = kmsClient();
    const original = kms.send.bind(kms) as (...args: unknown[]) => Promise<unknown>;
    const operations: string[] = [];
    jest.spyOn(kms, 'send').mockImplementation(((command: { constructor: { name: string } }, ...rest: unknown[]) => {
      operations.push(command.constructor.name);
      return original(command, ...rest);
    }) as never);
    const timings: number[] = [];
    const n = 40;
    for (let i = 0; i < n; i++) {
      const started = Date.now();
      const res = await post(labBody());
      timings.push(Date.now() - started);
      expect(res.status).toBe(200);
    }
    expect(operations.filter((o) => o === 'GenerateDataKeyCommand')).toHaveLength(1);
    expect(operations.filter((o) => o === 'DecryptCommand')).toHaveLength(0);
    expect(LAB_RESULT_DATA_KEY_MAX_USES).toBeGreaterThanOrEqual(2 * n);
    timings.sort((a, b) => a - b);

    console.log(
      `${n} sequential submissions: p50 ${timings[Math.floor(n / 2)]} ms, p95 ${timings[Math.floor(n * 0.95)]} ms, max ${timings[n - 1]} ms; KMS calls: ${operations.length}`,
    );
  });
});

describe('POST /receiveTestData: large documents', () => {
  it('stores a 4 MB base64 PDF in S3, encrypted, and reads it back identical', async () => {
    // 4,000,000 characters of base64 (a 3 MB PDF): with the rest of the body it stays under the 4 MiB request limit
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n% Patient Jane Zebra PDFMARK\n'), randomBytes((4_000_000 * 3) / 4 - 39)]);
    const data64 = pdf.toString('base64');
    expect(data64.length).toBe(4_000_000);
    const body = labBody({
      reports: [
        { source: 'base64', type: 'application/pdf', name: 'report.pdf', data: data64 },
        { source: 'text', type: 'note', name: 'short.txt', data: 'short' },
      ],
    });
    const started = Date.now();
    const res = await post(body);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    const out = res.json<Success>();
    const [item] = await versionItems(out.resultId);
    const itemBytes = JSON.stringify(item).length;
    expect(itemBytes).toBeLessThan(400 * 1024);
    expect(item!.documentKeys!.L!.map((k) => k.S)).toEqual([`lab-results/${out.resultId}/${out.version}/report-0`]);

    const object = await s3Client().send(new GetObjectCommand({ Bucket: stack.bucket, Key: `lab-results/${out.resultId}/${out.version}/report-0` }));
    const stored = await object.Body!.transformToString('utf8');
    expect(stored).not.toContain('PDFMARK');
    expect(stored).not.toContain(data64.slice(1000, 1100));
    expect(JSON.parse(stored)).toMatchObject({
      v: 1,
      alg: 'AES-256-GCM',
      ctx: { part: 'report-0', recordType: RECORD_TYPES.document, resultId: out.resultId, versionId: out.version },
    });

    const version = await labResultStore().readCurrent(out.resultId);
    expect(version!.submission.data.reports![0]!.data === data64).toBe(true);
    expect(version!.submission).toEqual(body);

    console.log(
      `4 MB base64 report: request ${elapsed} ms, item ${(itemBytes / 1024).toFixed(1)} KB, S3 object ${(stored.length / 1024 / 1024).toFixed(2)} MB`,
    );
  });

  it('moves a body too large for one item to S3 as a whole', async () => {
    const results = Array.from({ length: 120 }, (_, i) => ({ testName: `Panel item ${i}`, result: 'r'.repeat(3000), units: '' }));
    const body = labBody({
      results,
      reports: Array.from({ length: 6 }, (_, i) => ({ source: 'text', type: 'note', name: `n${i}.txt`, data: 'n'.repeat(15_000) })),
    });
    const res = await post(body);
    expect(res.status).toBe(200);
    const out = res.json<Success>();
    const [item] = await versionItems(out.resultId);
    expect(item!.documentKeys!.L!.map((k) => k.S)).toEqual([`lab-results/${out.resultId}/${out.version}/body`]);
    expect((await labResultStore().readCurrent(out.resultId))!.submission).toEqual(body);
    const summaries = await labResultStore({ documents: false }).recentResultsForPatient('demo-patient-1', 50);
    const summary = summaries.find((s) => s.resultId === out.resultId)!;
    // issue 27 K2: the summary is never cut; this one (~370 KB of tests, ~90 KB of reports of 15,000 characters each,
    // carried whole: K6) is stored in summary parts of 192 KiB, read back whole
    expect(summary.truncated).toBeUndefined();
    expect(summary.results).toEqual(results);
    expect(summary.documents?.map((d) => d.data)).toEqual(Array.from({ length: 6 }, () => 'n'.repeat(15_000)));
    const parts = (await scanAll(stack.tables.results)).filter((i) => i.pk?.S === `RESULT#${out.resultId}` && i.sk?.S?.startsWith('SUMMARYPART#'));
    expect(parts.length).toBe(3);
  });

  it('answers 413 problem+json naming the limit to a body just over 4 MiB, and stores nothing', async () => {
    const accession = unique('ACC-BIG');
    const body = (size: number) => {
      const shell = JSON.stringify(labBody({ accessionNumber: accession, reports: [{ source: 'text', type: 'text/plain', name: 'big.txt', data: '' }] }));
      const text = shell.replace('"data":""', `"data":"${'x'.repeat(size - shell.length)}"`);
      expect(Buffer.byteLength(text)).toBe(size);
      return text;
    };
    const stored = async () => (await scanAll(stack.tables.results)).length + (await scanAll(stack.tables.idempotency)).length;
    const before = await stored();
    const res = await post(body(MAX_REQUEST_BODY_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = res.json();
    expect(problem).toMatchObject({ type: '/problems/payload-too-large', title: 'Payload too large', status: 413 });
    expect(problem.detail).toContain(String(MAX_REQUEST_BODY_BYTES));
    expect(problem.requestId).toBe(res.headers.get('x-request-id'));
    expect(await stored()).toBe(before);
    // at the limit: the endpoint answers (accepted here), never the platform
    const atLimit = await post(body(MAX_REQUEST_BODY_BYTES));
    expect(atLimit.status).toBe(200);
  });
});

describe('POST /receiveTestData: validation and access', () => {
  it('answers 400 listing every missing or invalid field by JSON pointer', async () => {
    const res = await post({
      data: {
        patientID: 'p'.repeat(129),
        status: 'done',
        ResultedDateUTC: '2024-03-01T09:30:00+01:00',
        results: [{ testName: 'A', result: '1' }, { testName: 'B' }],
        reports: [
          { source: 'base64', type: 'pdf', name: 'a.pdf', data: '%%%' },
          { source: 'text', type: 'x', data: 'y' },
        ],
      },
    });
    expect(res.status).toBe(400);
    expectCommonHeaders(res);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const problem = res.json<{ type: string; errors: Array<{ pointer: string; message: string }> }>();
    expect(problem.type).toBe('/problems/validation-error');
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual(
      [
        '/data/senderID',
        '/data/patientID',
        '/data/accessionNumber',
        '/data/ResultedDateUTC',
        '/data/results/1/result',
        '/data/reports/1/name',
        '/data/reports/0/data',
        '/data/status',
      ].sort(),
    );
    const status = problem.errors.find((e) => e.pointer === '/data/status')!;
    for (const allowed of ['preliminary', 'final', 'corrected', 'amended', 'cancelled', 'P', 'F', 'C', 'X']) expect(status.message).toContain(allowed);
    expect(res.text).not.toContain('ppppppppp');
  });

  it('answers 400 for a non-JSON body and 415 for another content type', async () => {
    expect((await post('{"data": ')).status).toBe(400);
    const res = await call(stack, 'POST', '/receiveTestData', { headers: { 'x-api-key': 'demo-results-key', 'content-type': 'text/plain' }, body: '{}' });
    expect(res.status).toBe(415);
  });

  it('accepts HL7 status codes in any case and stores them normalised', async () => {
    const res = await post(labBody({ status: 'c' }));
    expect(res.status).toBe(200);
    const version = await labResultStore().readCurrent(res.json<Success>().resultId);
    expect(version!.status).toBe('corrected');
  });

  it('answers 403 when the partner may not send for the senderID', async () => {
    const res = await post(labBody({ senderID: 'other-lab' }));
    expect(res.status).toBe(403);
    expectCommonHeaders(res);
    expect(res.json<{ errors: Array<{ pointer: string }> }>().errors).toEqual([{ pointer: '/data/senderID', message: expect.any(String) }]);
    expect((await post(labBody({ senderID: 'DEMO-LAB-LIS' }))).status).toBe(200);
  });

  it.each([
    ['no key', {}, 401],
    ['unknown key', { 'x-api-key': 'not-a-key' }, 401],
    ['revoked key', { 'x-api-key': 'demo-revoked-key' }, 401],
    ['key without the results scope', { 'x-api-key': 'demo-export-key' }, 403],
    ['key of a blocked partner', { 'x-api-key': 'demo-blocked-key' }, 403],
    ['key with every scope', { 'x-api-key': 'demo-all-key' }, 200],
  ])('%s (%j) -> %i', async (_label, headers, status) => {
    const res = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'content-type': 'application/json', ...(headers as Record<string, string>) },
      body: JSON.stringify(labBody()),
    });
    expect(res.status).toBe(status);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('saves a result for an unknown patient and flags it unmatched (stored and notified, never answered)', async () => {
    const body = labBody({ patientID: 'LAB-MRN-00042' });
    const res = await post(body);
    expect(res.status).toBe(200);
    const out = res.json<Success>();
    expect(out).not.toHaveProperty('patientMatched');
    const version = await labResultStore().readCurrent(out.resultId);
    expect(version!.patientMatched).toBe(false);
    expect(version!.submission).toEqual(body);
    const found = await notificationsFor(out.version);
    expect(found[0]!.body).not.toHaveProperty('patientMatched');
  });
});

describe('POST /receiveTestData: versions', () => {
  const at = (t: string) => `2024-04-0${t}T10:00:00Z`;
  const variants = {
    prelim1: { status: 'preliminary', ResultedDateUTC: at('1') },
    final2: { status: 'F', ResultedDateUTC: at('2'), results: { testName: 'K', result: '4.1' } },
    prelim2: { status: 'P', ResultedDateUTC: at('2'), results: { testName: 'K', result: '4.0' } },
    corrected3: { status: 'corrected', ResultedDateUTC: at('3'), results: { testName: 'K', result: '4.2' } },
  };

  async function sendAll(order: Array<keyof typeof variants>, accession: string) {
    const versions: Record<string, string> = {};
    let resultId = '';
    for (const name of order) {
      const res = await post(labBody({ accessionNumber: accession, ...variants[name] }));
      expect(res.status).toBe(200);
      versions[name] = res.json<Success>().version;
      resultId = res.json<Success>().resultId;
    }
    return { versions, resultId };
  }

  it('keeps every resend as a new version and makes the highest status precedence current', async () => {
    const accession = unique('ACC-V');
    const { versions, resultId } = await sendAll(['prelim1', 'final2', 'corrected3'], accession);
    const store = labResultStore();
    const list = await store.listVersions(resultId);
    expect(list.map((v) => v.status)).toEqual(['preliminary', 'final', 'corrected']);
    expect(await store.currentVersionId(resultId)).toBe(versions.corrected3);
    expect((await store.readVersion(resultId, versions.prelim1!))!.status).toBe('preliminary');
  });

  it('a final outranks preliminaries whatever the arrival order and the ResultedDateUTC', async () => {
    const orders: Array<Array<keyof typeof variants>> = [
      ['prelim1', 'prelim2', 'final2'],
      ['final2', 'prelim2', 'prelim1'],
      ['prelim2', 'final2', 'prelim1'],
      ['final2', 'prelim1', 'prelim2'],
    ];
    for (const order of orders) {
      const { versions, resultId } = await sendAll(order, unique('ACC-O'));
      expect(await labResultStore().currentVersionId(resultId)).toBe(versions.final2);
      const current = (await labResultStore().readCurrent(resultId))!;
      expect([current.resultedAt, current.status, current.results]).toEqual([at('2'), 'final', [{ testName: 'K', result: '4.1' }]]);
    }
  });

  it('answers an older version as saved but not current', async () => {
    const accession = unique('ACC-OLD');
    await post(labBody({ accessionNumber: accession, ...variants.corrected3 }));
    const res = await post(labBody({ accessionNumber: accession, ...variants.prelim1 }));
    expect(res.json<Success>()).toMatchObject({ current: false, duplicate: false });
  });
});

describe('POST /receiveTestData: idempotency', () => {
  it('same x-request-id and body: the first response again, nothing new written', async () => {
    const body = labBody();
    const requestId = unique('req-same');
    const first = await post(body, { 'x-request-id': requestId });
    const before = (await versionItems(first.json<Success>().resultId)).length;
    const again = await post(JSON.stringify(body, null, 2), { 'x-request-id': requestId });
    expect(again.status).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-request-id')).toBe(requestId);
    expect((await versionItems(first.json<Success>().resultId)).length).toBe(before);
    expect(await notificationsFor(first.json<Success>().version)).toHaveLength(1);
  });

  it('same x-request-id with another body: 409', async () => {
    const requestId = unique('req-conflict');
    const body = labBody();
    expect((await post(body, { 'x-request-id': requestId })).status).toBe(200);
    const res = await post({ data: { ...(body.data as Json), status: 'corrected' } }, { 'x-request-id': requestId });
    expect(res.status).toBe(409);
    expect(res.json<{ type: string }>().type).toBe('/problems/conflict');
    expectCommonHeaders(res);
  });

  it('scopes request ids by partner, not by key, and keeps no caller text in the key', async () => {
    const requestId = unique('req-shared');
    const a = await post(labBody(), { 'x-request-id': requestId });
    const b = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-all-key', 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify(labBody()),
    });
    // same partner (demo-lab) behind both keys: another body under the same id conflicts
    expect(a.status).toBe(200);
    expect(b.status).toBe(409);
    const keys = (await scanAll(stack.tables.idempotency)).map((item) => item.pk!.S!);
    expect(keys.every((k) => /^receiveTestData#[0-9a-f]{64}$/.test(k))).toBe(true);
  });

  it('20 concurrent duplicates with one x-request-id: one record, the others replay or wait', async () => {
    const body = labBody();
    const requestId = unique('req-burst');
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(body, { 'x-request-id': requestId })));
    const ok = responses.filter((r) => r.status === 200);
    const busy = responses.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of busy) {
      expect(r.json<{ type: string }>().type).toBe('/problems/request-in-progress');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const first = ok[0]!.json<Success>();
    for (const r of ok) expect(r.json()).toEqual(first);
    expect(await versionItems(first.resultId)).toHaveLength(1);
    expect(await notificationsFor(first.version)).toHaveLength(1);
    // after the burst, a retry gets the stored response
    const later = await post(body, { 'x-request-id': requestId });
    expect(later.json()).toEqual(first);
  });

  it('20 concurrent identical submissions without x-request-id: stored once', async () => {
    const body = labBody();
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const outs = responses.map((r) => r.json<Success>());
    expect(new Set(outs.map((o) => o.version)).size).toBe(1);
    expect(outs.filter((o) => !o.duplicate)).toHaveLength(1);
    expect(await versionItems(outs[0]!.resultId)).toHaveLength(1);
  });

  it('a byte-identical resend later is recognised, not stored twice', async () => {
    const body = labBody();
    const first = await post(body);
    const second = await post(body);
    expect(second.json<Success>()).toMatchObject({ duplicate: true, version: first.json<Success>().version, resultId: first.json<Success>().resultId });
    expect(await versionItems(first.json<Success>().resultId)).toHaveLength(1);
  });

  it('an in-progress claim expires after its lease so a crashed request can be retried', async () => {
    const store = new IdempotencyStore(db(), stack.tables.idempotency);
    const key = unique('lease-test');
    const t0 = new Date();
    expect((await store.begin(key, 'fp-1', t0)).kind).toBe('claimed');
    await expect(store.begin(key, 'fp-1', new Date(t0.getTime() + 1000))).rejects.toBeInstanceOf(RequestInProgressError);
    await expect(store.begin(key, 'fp-2', new Date(t0.getTime() + 1000))).rejects.toBeInstanceOf(ConflictError);
    await expect(store.begin(key, 'fp-2', new Date(t0.getTime() + LEASE_MS + 1000))).rejects.toBeInstanceOf(ConflictError);
    const taken = await store.begin(key, 'fp-1', new Date(t0.getTime() + LEASE_MS + 1000));
    expect(taken.kind).toBe('claimed');
    if (taken.kind !== 'claimed') return;
    await store.complete(key, taken.token, { status: 200, body: { ok: true } });
    expect(await store.begin(key, 'fp-1', new Date(t0.getTime() + LEASE_MS + 2000))).toEqual({ kind: 'replay', response: { status: 200, body: { ok: true } } });
  });
});

describe('POST /receiveTestData: failures', () => {
  const queueDown = () =>
    failCommands(
      sqsClient(),
      (c) => c.constructor.name === SendMessageCommand.name || c.constructor.name === SendMessageBatchCommand.name,
      'ServiceUnavailable',
    );

  it('a queue failure still answers 200; the notification stays pending and the retry function sends it', async () => {
    const spy = queueDown();
    const res = await post(labBody());
    expect(spy).toHaveBeenCalled();
    spy.mockRestore();
    expect(res.status).toBe(200);
    const out = res.json<Success>();
    expect(out).toMatchObject({ message: 'Encrypted result saved; notifications attempted.', notification: 'pending' });
    expect((await labResultStore().listVersions(out.resultId))[0]).toMatchObject({ notificationState: 'pending', notificationAttempts: 1 });
    expect(await notificationsFor(out.version, 200)).toHaveLength(0);

    const summary = await retryHandler({}, lambdaContext('retryResultNotifications', 60));
    expect(summary.sent).toBeGreaterThanOrEqual(1);
    expect((await labResultStore().listVersions(out.resultId))[0]).toMatchObject({ notificationState: 'sent' });
    const found = await notificationsFor(out.version);
    expect(found).toHaveLength(1);
    expect(found[0]!.body).toMatchObject({ resultId: out.resultId, versionId: out.version, status: 'final' });
    // sent notifications leave the pending index: the next run finds nothing for this version
    await retryHandler({}, lambdaContext('retryResultNotifications', 60));
    expect(await notificationsFor(out.version, 200)).toHaveLength(1);
  });

  it('the retry function backs off while the queue is still down', async () => {
    const spy = queueDown();
    const out = (await post(labBody())).json<Success>();
    const down = await retryHandler({}, lambdaContext('retryResultNotifications', 60));
    spy.mockRestore();
    expect(down.failed).toBeGreaterThanOrEqual(1);
    expect((await labResultStore().listVersions(out.resultId))[0]).toMatchObject({ notificationState: 'pending', notificationAttempts: 2 });
    const store = labResultStore({ documents: false });
    expect((await store.pendingNotifications(new Date(), 100)).map((v) => v.versionId)).not.toContain(out.version);
    const later = new Date(Date.now() + 3 * 60 * 1000);
    expect((await store.pendingNotifications(later, 100)).map((v) => v.versionId)).toContain(out.version);
    const { retryPendingNotifications } = await import('../../lib/results/retry');
    const { resultNotifier } = await import('../../lib/results/result-wiring');
    const sent = await retryPendingNotifications({ store, notifier: resultNotifier() }, { now: () => later, remainingMs: () => 60_000 });
    expect(sent.sent).toBeGreaterThanOrEqual(1);
    expect(await notificationsFor(out.version)).toHaveLength(1);
  });

  it('DynamoDB throttling on the version write: 503 with Retry-After, nothing visible, the retry succeeds once', async () => {
    const body = labBody();
    const requestId = unique('req-throttle');
    const spy = failCommands(
      db(),
      (c) => c.constructor.name === 'PutItemCommand' && String((c.input.Item as Record<string, { S?: string }> | undefined)?.sk?.S).startsWith('VERSION#'),
    );
    const res = await post(body, { 'x-request-id': requestId });
    spy.mockRestore();
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectCommonHeaders(res);
    const stored = await everythingStored();
    expect(stored).not.toContain((body.data as Json).accessionNumber as string);

    const retry = await post(body, { 'x-request-id': requestId });
    expect(retry.status).toBe(200);
    const out = retry.json<Success>();
    expect(await versionItems(out.resultId)).toHaveLength(1);
    expect(await labResultStore().currentVersionId(out.resultId)).toBe(out.version);
  });

  it('a crash after the version write (pointer update throttled): 503, then the retry completes the same version exactly once', async () => {
    const body = labBody();
    const requestId = unique('req-crash');
    const spy = failCommands(db(), (c) => c.constructor.name === 'UpdateItemCommand' && (c.input.Key as Record<string, { S?: string }>).sk?.S === 'CURRENT');
    const res = await post(body, { 'x-request-id': requestId });
    spy.mockRestore();
    expect(res.status).toBe(503);

    const retry = await post(body, { 'x-request-id': requestId });
    expect(retry.status).toBe(200);
    const out = retry.json<Success>();
    expect(out.duplicate).toBe(true); // the version item from the failed attempt, completed now
    expect(await versionItems(out.resultId)).toHaveLength(1);
    expect(await labResultStore().currentVersionId(out.resultId)).toBe(out.version);
    expect(await notificationsFor(out.version)).toHaveLength(1);
  });

  it('KMS throttling: 503 with Retry-After', async () => {
    const { clearResultKeysCache } = await import('../../lib/results/lookup-keys');
    const { labResultEncryptor } = await import('../../lib/results/result-wiring');
    labResultEncryptor().clearCache();
    clearResultKeysCache();
    const spy = failCommands(kmsClient(), () => true);
    const res = await post(labBody());
    spy.mockRestore();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect((await post(labBody())).status).toBe(200);
  });
});
