/**
 * Form intake, matching, sweeping and the inbox, end to end on the local stack (dynalite, fauxqs
 * SQS, local KMS, the emulated API Gateway running the real handlers). The matching worker runs
 * through startLocalFormWorkers (real ReceiveMessage/DeleteMessage on the matching queue). The
 * only mock is a fault: SQS SendMessage rejecting during the "queue outage" test.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { HttpEndpoints } from '../../lib/config/service';
import { dispatch } from '../../lib/local/api-gateway';
import { dynamoDbClient, sqsClient } from '../../lib/aws/clients';
import { ChartStore } from '../../lib/chart/chart-store';
import type { Patient } from '../../lib/chart/types';
import { startLocalFormWorkers, type LocalFormWorkers } from '../../lib/local/form-workers';
import { indexPatientsForMatching } from '../../lib/forms/match-index';
import { packetIdFor } from '../../lib/forms/packet-id';
import type { HistoryEntry } from '../../lib/forms/types';
import { loadHandler } from '../../lib/local/function-registry';
import { lambdaContext } from '../../lib/local/lambda-context';
import type { LocalStack } from '../../lib/local/stack';
import { setLogSink, type LogSink } from '../../lib/observability/logger';
import { checkContract } from '../support/contract';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

const FORMS_KEY = 'demo-forms-key';
const INBOX_KEY = 'demo-inbox-key';
const SOURCE = 'demo-form-tool';

/** Every PHI value this file sends; none may appear in a log line, a queue message or a plain attribute. */
const PHI = {
  alex: { firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12' },
  robin: { firstName: 'Robin', lastName: 'Example', dob: '1975-06-30' },
  stranger: { firstName: 'Quillon', lastName: 'Vastergaard', dob: '1969-07-20', email: 'quillon.vastergaard@example.test' },
  answer: 'penicillin-allergy-zq7',
};
const PHI_STRINGS = [
  'Sample',
  '1980-04-12',
  'Robin',
  '1975-06-30',
  'Quillon',
  'Vastergaard',
  '1969-07-20',
  'quillon.vastergaard',
  PHI.answer,
  'Intake questionnaire zq',
];

let stack: LocalStack;
let workers: LocalFormWorkers;
let previousSink: LogSink;
let previousLevel: string | undefined;
const logs: string[] = [];
const queueBodies: string[] = [];
let queueOutage = false;

interface IntakeBody {
  status: string;
  packetId: string;
  routedTo: string;
  state: string;
  requestId: string;
}

interface PacketView {
  packetId: string;
  state: string;
  reason?: string;
  patientId?: string;
  requestedPatientId?: string;
  patient: Record<string, string>;
  answers: Record<string, unknown>;
  formName?: string;
  candidates: Array<{ patientId: string; score: number; reasons: string[] }>;
  history: HistoryEntry[];
}

function packet(over: { patient?: Record<string, string>; patientId?: string; submissionId?: string; extra?: Record<string, unknown> } = {}) {
  return {
    payload: {
      sourceSystemId: SOURCE,
      formId: 'intake-v3',
      formName: 'Intake questionnaire zq',
      submissionId: over.submissionId ?? `sub-${randomUUID()}`,
      patient: over.patient ?? { ...PHI.stranger },
      answers: { allergies: PHI.answer, smoker: 'no', visits: 2 },
      ...(over.patientId ? { patientId: over.patientId } : {}),
      ...(over.extra ?? {}),
    },
  };
}

function post(body: unknown, key = FORMS_KEY, headers: Record<string, string> = {}): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveFormIntakeScope', {
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function view(packetId: string): Promise<PacketView> {
  const res = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: { 'x-api-key': INBOX_KEY } });
  expect(res.status).toBe(200);
  return res.json<PacketView>();
}

async function waitFor(packetId: string, done: (p: PacketView) => boolean, timeoutMs = 10_000): Promise<PacketView> {
  const deadline = Date.now() + timeoutMs;
  let last = await view(packetId);
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`packet ${packetId} still ${last.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
    last = await view(packetId);
  }
  return last;
}

function route(packetId: string, patientId: string, key = INBOX_KEY): Promise<HttpResult> {
  return call(stack, 'POST', `/interopInbox/${packetId}/route`, {
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ patientId }),
  });
}

function expectCommonHeaders(res: HttpResult) {
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
  expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
  expect(res.headers.get('cache-control')).toBe('no-store');
}

function receivedEntries(p: PacketView) {
  return p.history.filter((h) => h.action === 'received');
}

beforeAll(async () => {
  // capture every line, info and debug included, to prove none carries PHI
  previousLevel = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = 'debug';
  previousSink = setLogSink((line) => logs.push(line));
  stack = await startTestStack();

  // observe every message sent to SQS; fail SendMessage only while `queueOutage` is on
  const sqs = sqsClient();
  const realSend = sqs.send.bind(sqs) as (...args: unknown[]) => Promise<unknown>;
  jest.spyOn(sqs, 'send').mockImplementation(((command: unknown, ...rest: unknown[]) => {
    if (command instanceof SendMessageCommand) {
      if (queueOutage) return Promise.reject(Object.assign(new Error('queue unavailable'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }));
      queueBodies.push(command.input.MessageBody ?? '');
    }
    if (command instanceof SendMessageBatchCommand) for (const e of command.input.Entries ?? []) queueBodies.push(e.MessageBody ?? '');
    return realSend(command, ...rest);
  }) as typeof sqs.send);

  // until the chart import indexes patients itself, index the demo chart here
  const chart = new ChartStore(dynamoDbClient(), stack.tables.chart);
  const patients = (await Promise.all([1, 2, 3, 4, 5].map((n) => chart.getPatient(`demo-patient-${n}`)))).filter((p): p is Patient => !!p);
  expect(patients).toHaveLength(5);
  expect(await indexPatientsForMatching(patients)).toBe(5);

  workers = startLocalFormWorkers({ intervalMs: 50, sweepIntervalMs: 0 });
});

afterAll(async () => {
  await workers?.stop();
  jest.restoreAllMocks();
  await stack?.close();
  setLogSink(previousSink);
  if (previousLevel === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = previousLevel;
});

describe('POST /receiveFormIntakeScope routing', () => {
  it('routes a packet naming a known patient directly (answer 202 like every other), stored under the patient', async () => {
    const res = await post(packet({ patientId: 'demo-patient-1', patient: { ...PHI.alex } }), FORMS_KEY, { 'x-request-id': 'forms-trace-1' });
    expect(res.status).toBe(202);
    expectCommonHeaders(res);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = res.json<IntakeBody>();
    expect(body).toEqual({ status: 'accepted', packetId: expect.stringMatching(/^fp_[0-9a-f]{32}$/), requestId: 'forms-trace-1' });

    const item = await dynamoDbClient().send(
      new GetItemCommand({ TableName: stack.tables.forms, Key: { pk: { S: `PACKET#${body.packetId}` }, sk: { S: 'PACKET' } } }),
    );
    expect(item.Item?.statePk?.S).toBe('PATIENT#demo-patient-1');
    expect(item.Item?.state?.S).toBe('routed');
    // never in the inbox, so the inbox does not show it
    expect((await call(stack, 'GET', `/interopInbox/${body.packetId}`, { headers: { 'x-api-key': INBOX_KEY } })).status).toBe(404);
  });

  it('accepts patientId leniently at payload.patient.patientId', async () => {
    const res = await post(packet({ patient: { ...PHI.alex, patientId: 'demo-patient-1' } }));
    expect(res.status).toBe(202);
    const item = await dynamoDbClient().send(
      new GetItemCommand({ TableName: stack.tables.forms, Key: { pk: { S: `PACKET#${res.json<IntakeBody>().packetId}` }, sk: { S: 'PACKET' } } }),
    );
    expect(item.Item?.state?.S).toBe('routed');
    expect(item.Item?.patientId?.S).toBe('demo-patient-1');
  });

  it('keeps plain attributes free of PHI and encrypts the content', async () => {
    const res = await post(packet({ patient: { ...PHI.stranger, externalPatientId: 'ext-plain-check' } }));
    expect(res.status).toBe(202);
    const { packetId } = res.json<IntakeBody>();
    const item = (
      await dynamoDbClient().send(new GetItemCommand({ TableName: stack.tables.forms, Key: { pk: { S: `PACKET#${packetId}` }, sk: { S: 'PACKET' } } }))
    ).Item!;
    const { content, ...plain } = item;
    const plainText = JSON.stringify(plain);
    for (const phi of [...PHI_STRINGS, 'ext-plain-check']) expect(plainText).not.toContain(phi);
    const envelope = JSON.parse(content!.S!) as Record<string, unknown>;
    expect(envelope).toMatchObject({ v: 1, alg: 'AES-256-GCM', ctx: { recordType: 'form-packet', packetId, sourceSystemId: SOURCE } });
    for (const phi of PHI_STRINGS) expect(content!.S!).not.toContain(phi);
    // the reviewer sees it decrypted
    const seen = await view(packetId);
    expect(seen.patient).toEqual({ ...PHI.stranger, externalPatientId: 'ext-plain-check' });
    expect(seen.answers).toEqual({ allergies: PHI.answer, smoker: 'no', visits: 2 });
    expect(seen.formName).toBe('Intake questionnaire zq');
  });

  it('holds a packet naming an unknown patient for review, with the reason: 202, never dropped', async () => {
    const res = await post(packet({ patientId: 'no-such-patient', patient: { ...PHI.alex } }));
    expect(res.status).toBe(202);
    expectCommonHeaders(res);
    const body = res.json<IntakeBody>();
    expect(body).toEqual({ status: 'accepted', packetId: expect.any(String), requestId: expect.any(String) });
    // the matcher records candidates for the reviewer but leaves the decision to staff
    const seen = await waitFor(body.packetId, (p) => p.candidates.length > 0);
    expect(seen).toMatchObject({ state: 'pending_review', reason: 'unknown_patient_id', requestedPatientId: 'no-such-patient' });
    expect(seen.candidates[0]).toMatchObject({ patientId: 'demo-patient-1', score: 31.2 });
  });

  it('queues a packet without patientId; the worker matches a demo patient within seconds', async () => {
    const started = Date.now();
    const res = await post(packet({ patient: { ...PHI.alex } }));
    expect(res.status).toBe(202);
    const body = res.json<IntakeBody>();
    expect(body).toEqual({ status: 'accepted', packetId: expect.any(String), requestId: expect.any(String) });
    const matched = await waitFor(body.packetId, (p) => p.state === 'matched', 5_000);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(5_000);
    process.stdout.write(`form-intake: post -> matched in ${elapsed} ms\n`);
    expect(matched).toMatchObject({ state: 'matched', reason: 'score', patientId: 'demo-patient-1' });
    expect(matched.candidates).toEqual([
      { patientId: 'demo-patient-1', score: 31.2, reasons: ['dob_exact:+14.6', 'first_name_exact:+7.8', 'last_name_exact:+8.8'] },
    ]);
    expect(matched.history.map((h) => [h.action, h.state, h.actor])).toEqual([
      ['received', 'pending_match', 'api-key'],
      ['matched', 'matched', 'matcher'],
    ]);
    expect(matched.history[0]).toMatchObject({ partnerId: 'demo-forms', keyId: expect.stringMatching(/^key_/) });
  });

  it('a nickname + email also matches (Alexander, same email)', async () => {
    const res = await post(packet({ patient: { ...PHI.alex, firstName: 'Alexander', email: 'ALEX.SAMPLE@example.com' } }));
    const matched = await waitFor(res.json<IntakeBody>().packetId, (p) => p.state !== 'pending_match');
    expect(matched).toMatchObject({ state: 'matched', patientId: 'demo-patient-1' });
    expect(matched.candidates[0]!.reasons).toEqual(['dob_exact:+14.6', 'first_name_nickname:+4.7', 'last_name_exact:+8.8', 'email_exact:+13.1']);
  });
});

describe('ambiguous packets and the inbox', () => {
  const externalPatientId = `robin-${randomUUID().slice(0, 8)}`;
  let ambiguousId: string;

  it('holds a packet matching two patients (same name and birth date) for review with both candidates', async () => {
    const res = await post(packet({ patient: { ...PHI.robin, externalPatientId } }));
    expect(res.status).toBe(202);
    ambiguousId = res.json<IntakeBody>().packetId;
    const held = await waitFor(ambiguousId, (p) => p.state !== 'pending_match');
    expect(held).toMatchObject({ state: 'pending_review', reason: 'ambiguous' });
    expect(held.candidates.map((c) => [c.patientId, c.score])).toEqual([
      ['demo-patient-3', 31.2],
      ['demo-patient-4', 31.2],
    ]);
    expect(held.history.at(-1)).toMatchObject({
      action: 'held_for_review',
      from: 'pending_match',
      state: 'pending_review',
      actor: 'matcher',
      reason: 'ambiguous',
    });
  });

  it('lists packets awaiting review newest first, paginated with an opaque cursor', async () => {
    // one more pending_review packet (unknown patient id), newer than the ambiguous one
    const newer = (await post(packet({ patientId: 'still-unknown' }))).json<IntakeBody>().packetId;
    const first = await call(stack, 'GET', '/interopInbox?limit=1', { headers: { 'x-api-key': INBOX_KEY } });
    expect(first.status).toBe(200);
    expectCommonHeaders(first);
    const page1 = first.json<{
      items: Array<{ packetId: string; receivedAt: string; state: string; candidateCount: number }>;
      nextCursor?: string;
      limit: number;
      state: string;
    }>();
    expect(page1).toMatchObject({ state: 'pending_review', limit: 1 });
    expect(page1.items).toHaveLength(1);
    expect(page1.items[0]!.packetId).toBe(newer);
    expect(page1.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    // no PHI in the list
    for (const phi of PHI_STRINGS) expect(first.text).not.toContain(phi);

    const all: Array<{ packetId: string; receivedAt: string }> = [...page1.items];
    let cursor = page1.nextCursor;
    while (cursor) {
      const res = await call(stack, 'GET', `/interopInbox?limit=2&cursor=${cursor}`, { headers: { 'x-api-key': INBOX_KEY } });
      expect(res.status).toBe(200);
      const page = res.json<{ items: Array<{ packetId: string; receivedAt: string }>; nextCursor?: string }>();
      all.push(...page.items);
      cursor = page.nextCursor;
    }
    const ids = all.map((i) => i.packetId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(ambiguousId);
    const times = all.map((i) => i.receivedAt);
    expect([...times].sort().reverse()).toEqual(times);

    const tampered = await call(stack, 'GET', `/interopInbox?cursor=${Buffer.from('{"v":1}').toString('base64url')}`, { headers: { 'x-api-key': INBOX_KEY } });
    expect(tampered.status).toBe(400);
    expect(tampered.json<{ errors: Array<{ parameter: string }> }>().errors).toEqual([{ parameter: 'cursor', message: expect.any(String) }]);
    const badState = await call(stack, 'GET', '/interopInbox?state=routed', { headers: { 'x-api-key': INBOX_KEY } });
    expect(badState.status).toBe(400);
    const badLimit = await call(stack, 'GET', '/interopInbox?limit=0', { headers: { 'x-api-key': INBOX_KEY } });
    expect(badLimit.status).toBe(400);
  });

  it('routes it by the inbox API: 404 unknown packet / patient, 200 routed_manually, then 409', async () => {
    expect((await route(packetIdFor('nobody', 'nobody', 'nothing'), 'demo-patient-4')).status).toBe(404);
    expect((await route('not-a-packet-id', 'demo-patient-4')).status).toBe(404);
    expect((await route(ambiguousId, 'no-such-patient')).status).toBe(404);
    const bad = await call(stack, 'POST', `/interopInbox/${ambiguousId}/route`, {
      headers: { 'x-api-key': INBOX_KEY, 'content-type': 'application/json' },
      body: '{"patientId":""}',
    });
    expect(bad.status).toBe(400);

    const res = await route(ambiguousId, 'demo-patient-4');
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.json()).toMatchObject({ status: 'routed', packetId: ambiguousId, routedTo: 'demo-patient-4', state: 'routed_manually' });

    const again = await route(ambiguousId, 'demo-patient-3');
    expect(again.status).toBe(409);
    expect(again.json()).toMatchObject({ status: 409, state: 'routed_manually', routedTo: 'demo-patient-4' });

    const seen = await view(ambiguousId);
    expect(seen).toMatchObject({ state: 'routed_manually', patientId: 'demo-patient-4' });
    expect(seen.history.at(-1)).toMatchObject({
      action: 'routed_manually',
      from: 'pending_review',
      state: 'routed_manually',
      actor: 'api-key',
      partnerId: 'demo-staff',
      keyId: expect.stringMatching(/^key_/),
      patientId: 'demo-patient-4',
    });

    const list = await call(stack, 'GET', '/interopInbox?limit=100', { headers: { 'x-api-key': INBOX_KEY } });
    expect(list.json<{ items: Array<{ packetId: string }> }>().items.map((i) => i.packetId)).not.toContain(ambiguousId);
  });

  it("remembers the reviewer's link: the next packet from the same form tool patient is matched", async () => {
    const res = await post(packet({ patient: { ...PHI.robin, externalPatientId } }));
    const matched = await waitFor(res.json<IntakeBody>().packetId, (p) => p.state !== 'pending_match');
    expect(matched).toMatchObject({ state: 'matched', reason: 'known_link', patientId: 'demo-patient-4' });
  });
});

describe('nothing lost, nothing doubled', () => {
  it('a queue outage during intake loses nothing: the request succeeds and the sweeper re-queues the packet', async () => {
    queueOutage = true;
    let packetId: string;
    try {
      const res = await post(packet({ patient: { ...PHI.alex } }));
      expect(res.status).toBe(202);
      packetId = res.json<IntakeBody>().packetId;
    } finally {
      queueOutage = false;
    }
    expect(logs.some((l) => l.includes('forms.intake.queue_send_failed') && l.includes(packetId))).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect((await view(packetId)).state).toBe('pending_match');

    const sweep = await loadHandler('sweepPendingPackets');
    const result = (await sweep({ thresholdSeconds: 0 }, lambdaContext('sweepPendingPackets', 60), () => undefined)) as { requeued: number; found: number };
    expect(result.requeued).toBeGreaterThanOrEqual(1);
    const matched = await waitFor(packetId, (p) => p.state !== 'pending_match');
    expect(matched).toMatchObject({ state: 'matched', patientId: 'demo-patient-1' });
    expect(matched.history.map((h) => [h.action, h.actor])).toEqual([
      ['received', 'api-key'],
      ['requeued', 'sweeper'],
      ['matched', 'matcher'],
    ]);
    expect(queueBodies.filter((b) => b.includes(packetId))).toHaveLength(1);
  });

  it('the same submission twice stores one packet and returns the first', async () => {
    const body = packet({ patient: { ...PHI.stranger } });
    const first = await post(body);
    const second = await post(body);
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    const a = first.json<IntakeBody>();
    const b = second.json<IntakeBody>();
    expect(b).toMatchObject({ status: 'accepted', packetId: a.packetId });
    expect(a.packetId).toBe(packetIdFor('demo-forms', SOURCE, body.payload.submissionId));
    expect(receivedEntries(await view(a.packetId))).toHaveLength(1);
    // another partner naming this partner's form source is refused (issue 12)
    const foreign = await post(body, 'demo-all-key');
    expect(foreign.status).toBe(403);
  });

  it('20 concurrent copies of one submission store one packet and send one queue message', async () => {
    const body = packet({ patient: { ...PHI.stranger } });
    const results = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(20);
    const ids = new Set(results.map((r) => r.json<IntakeBody>().packetId));
    expect(ids.size).toBe(1);
    const [packetId] = [...ids];
    const seen = await view(packetId!);
    expect(receivedEntries(seen)).toHaveLength(1);
    expect(queueBodies.filter((b) => b.includes(packetId!))).toHaveLength(1);
  });
});

describe('the matching worker', () => {
  const record = (messageId: string, body: string): SQSEvent['Records'][number] => ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:test',
    awsRegion: 'us-east-1',
  });

  it('handles the same message delivered twice in one batch once, and reports only the bad record', async () => {
    queueOutage = true; // keep the worker loop out of it: no message is queued for this packet
    let packetId: string;
    try {
      packetId = (await post(packet({ patient: { ...PHI.alex } }))).json<IntakeBody>().packetId;
    } finally {
      queueOutage = false;
    }
    const body = JSON.stringify({ v: 1, packetId });
    const handler = await loadHandler('matchFormPackets');
    const event: SQSEvent = { Records: [record('m1', body), record('m2', body), record('m3', '{"v":1,"packetId":"../../etc"}')] };
    const response = (await handler(event, lambdaContext('matchFormPackets', 30), () => undefined)) as SQSBatchResponse;
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm3' }] });
    // and once more, later: nothing changes
    expect(await handler({ Records: [record('m4', body)] }, lambdaContext('matchFormPackets', 30), () => undefined)).toEqual({ batchItemFailures: [] });
    const seen = await view(packetId);
    expect(seen).toMatchObject({ state: 'matched', patientId: 'demo-patient-1' });
    expect(seen.history.filter((h) => h.action === 'matched')).toHaveLength(1);
  });

  it('the local worker deletes processed messages and leaves failed ones on the queue', async () => {
    // a separate client: these bodies are not ours and must not count as service messages
    const raw = new SQSClient({ region: 'us-east-1', endpoint: stack.urls.sqs, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const queueUrl = stack.queues.matching.url;
    try {
      await raw.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'not a matching message' }));
      const deadline = Date.now() + 5_000;
      let attrs: Record<string, string> = {};
      do {
        await new Promise((r) => setTimeout(r, 50));
        attrs =
          (
            await raw.send(
              new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
            )
          ).Attributes ?? {};
        // messages of earlier tests may still be in flight for a moment; ours never leaves
      } while (!(attrs.ApproximateNumberOfMessages === '0' && attrs.ApproximateNumberOfMessagesNotVisible === '1') && Date.now() < deadline);
      expect(logs.some((l) => l.includes('"forms.match.bad_message"'))).toBe(true);
      // received, reported as failed, not deleted: in flight until the visibility timeout
      expect(attrs).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '1' });
    } finally {
      raw.destroy();
    }
  });
});

describe('validation and access', () => {
  it('400 lists every missing required field', async () => {
    const res = await post({ payload: { patient: {} } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expectCommonHeaders(res);
    const pointers = res
      .json<{ errors: Array<{ pointer: string }> }>()
      .errors.map((e) => e.pointer)
      .sort();
    expect(pointers).toEqual(
      [
        '/payload/answers',
        '/payload/formId',
        '/payload/patient/firstName',
        '/payload/patient/lastName',
        '/payload/sourceSystemId',
        '/payload/submissionId',
      ].sort(),
    );
  });

  it('400 lists every malformed field without echoing values', async () => {
    const body = packet({ patient: { firstName: 'Quillon', lastName: ' ', dob: '2023-02-30', email: 'not-an-email' } });
    const res = await post(body);
    expect(res.status).toBe(400);
    const errors = res.json<{ errors: Array<{ pointer: string; message: string }> }>().errors;
    expect(errors.map((e) => e.pointer).sort()).toEqual(['/payload/patient/dob', '/payload/patient/email', '/payload/patient/lastName']);
    expect(res.text).not.toContain('2023-02-30');
    expect(res.text).not.toContain('not-an-email');

    const future = await post(packet({ patient: { ...PHI.stranger, dob: '2999-01-01' } }));
    expect(future.status).toBe(400);
    expect(future.json<{ errors: Array<{ pointer: string }> }>().errors).toEqual([{ pointer: '/payload/patient/dob', message: 'must not be in the future' }]);

    const missingPayload = await post({});
    expect(missingPayload.json<{ errors: Array<{ pointer: string }> }>().errors).toEqual([{ pointer: '/payload', message: 'is required' }]);
    expect((await post('not json')).status).toBe(400);
    const big = packet({ extra: { answers: { a: 'x'.repeat(90_000), b: 'y'.repeat(90_000), c: 'z'.repeat(90_000) } } });
    const tooLarge = await post(big);
    expect(tooLarge.status).toBe(413);
    expect(
      (await call(stack, 'GET', `/interopInbox/${packetIdFor('demo-forms', SOURCE, big.payload.submissionId)}`, { headers: { 'x-api-key': INBOX_KEY } }))
        .status,
    ).toBe(404);
    expect(
      (await call(stack, 'POST', '/receiveFormIntakeScope', { headers: { 'x-api-key': FORMS_KEY, 'content-type': 'text/plain' }, body: '{}' })).status,
    ).toBe(415);
  });

  it.each([
    ['POST', '/receiveFormIntakeScope', undefined, 401],
    ['POST', '/receiveFormIntakeScope', 'not-a-key', 401],
    ['POST', '/receiveFormIntakeScope', 'demo-revoked-key', 401],
    ['POST', '/receiveFormIntakeScope', INBOX_KEY, 403],
    ['POST', '/receiveFormIntakeScope', 'demo-export-key', 403],
    ['POST', '/receiveFormIntakeScope', 'demo-blocked-key', 403],
    ['GET', '/interopInbox', undefined, 401],
    ['GET', '/interopInbox', FORMS_KEY, 403],
    ['GET', '/interopInbox', 'demo-all-key', 403],
    ['GET', `/interopInbox/${packetIdFor('p', 'a', 'b')}`, FORMS_KEY, 403],
    ['POST', `/interopInbox/${packetIdFor('p', 'a', 'b')}/route`, FORMS_KEY, 403],
    ['POST', `/interopInbox/${packetIdFor('p', 'a', 'b')}/route`, 'not-a-key', 401],
  ])('%s %s with key %s -> %i', async (method, path, key, status) => {
    const res = await call(stack, method, path, {
      headers: { ...(key ? { 'x-api-key': key } : {}), 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: JSON.stringify(path.endsWith('/route') ? { patientId: 'demo-patient-1' } : packet()) } : {}),
    });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expectCommonHeaders(res);
  });
});

describe('events/ (as npm run invoke replays them)', () => {
  const load = <T>(file: string) => JSON.parse(readFileSync(path.resolve(__dirname, '../../events', file), 'utf8')) as T;
  async function invoke(name: string, file: string) {
    const event = load<APIGatewayProxyEvent>(file);
    const endpoint = HttpEndpoints.find((e) => e.name === name)!;
    const query = new URLSearchParams(Object.entries(event.queryStringParameters ?? {}).map(([k, v]) => [k, String(v)]));
    const url = endpoint.path.replace(/\{(\w+)\}/g, (_m, p: string) => encodeURIComponent(event.pathParameters?.[p] ?? '')) + (query.size ? `?${query}` : '');
    const headers = Object.entries(event.headers ?? {}).map(([k, v]) => [k, String(v)] as [string, string]);
    const result = await dispatch({ method: endpoint.method, url, headers, body: event.body ? Buffer.from(event.body) : undefined, sourceIp: '127.0.0.1' });
    checkContract(
      { method: endpoint.method, url },
      { status: result.statusCode, headers: (result.headers ?? {}) as Record<string, string>, body: result.body },
    );
    return result;
  }

  it('every forms event file runs against the local stack', async () => {
    expect((await invoke('receiveFormIntakeScope', 'receiveFormIntakeScope.routed.json')).statusCode).toBe(202);
    expect((await invoke('receiveFormIntakeScope', 'receiveFormIntakeScope.invalid.json')).statusCode).toBe(400);
    expect((await invoke('receiveFormIntakeScope', 'receiveFormIntakeScope.forbidden.json')).statusCode).toBe(403);
    const queued = await invoke('receiveFormIntakeScope', 'receiveFormIntakeScope.json');
    expect(queued.statusCode).toBe(202);
    const { packetId } = JSON.parse(queued.body) as IntakeBody;
    expect(load<APIGatewayProxyEvent>('getInboxPacket.json').pathParameters?.packetId).toBe(packetId);
    await waitFor(packetId, (p) => p.state === 'pending_review');
    const matcher = await loadHandler('matchFormPackets');
    expect(await matcher(load('matchFormPackets.json'), lambdaContext('matchFormPackets', 30), () => undefined)).toEqual({ batchItemFailures: [] });
    expect((await invoke('listInteropInbox', 'listInteropInbox.json')).statusCode).toBe(200);
    expect((await invoke('getInboxPacket', 'getInboxPacket.json')).statusCode).toBe(200);
    const search = await invoke('searchInboxPatients', 'searchInboxPatients.json');
    expect(search.statusCode).toBe(200);
    expect((JSON.parse(search.body) as { charts: Array<{ patientId: string }> }).charts.map((c) => c.patientId)).toContain('demo-patient-3');
    expect((await invoke('routeInboxPacket', 'routeInboxPacket.json')).statusCode).toBe(200);
    // the same routing again is a retry: answered as the first call was, nothing changes
    expect((await invoke('routeInboxPacket', 'routeInboxPacket.json')).statusCode).toBe(200);
  });
});

describe('no PHI outside the encrypted content (runs last)', () => {
  it('every queue message is {"v":1,"packetId":...} and no log line carries a PHI value', () => {
    expect(queueBodies.length).toBeGreaterThan(5);
    for (const body of queueBodies) {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      expect(Object.keys(parsed).sort()).toEqual(['packetId', 'v']);
      expect(parsed.packetId).toMatch(/^fp_[0-9a-f]{32}$/);
    }
    expect(logs.length).toBeGreaterThan(50);
    // the forms events are among them
    for (const event of ['forms.intake.stored', 'forms.match.done', 'forms.sweep.done']) expect(logs.some((l) => l.includes(`"${event}"`))).toBe(true);
    for (const line of logs) for (const phi of PHI_STRINGS) expect(line).not.toContain(phi);
  });
});
