/**
 * Reliability suite 2: dependency faults on every write path, at every step.
 *
 * Write paths: POST /receiveTestData, POST /receiveFormIntakeScope, POST /interopInbox/{id}/route.
 * For each scenario of a path, one pass-through request first records the AWS calls it makes
 * (DynamoDB, KMS, SQS, S3, in order, through jest spies on the shared clients of lib/aws/clients.ts:
 * the authorizer's calls included); then for every step N of that trace and every fault kind
 * (ThrottlingException, a socket timeout (TimeoutError after a delay), InternalServerError) a
 * fresh request fails exactly its Nth call. Data-key and lookup-key caches are emptied before each
 * "cold" attempt so the KMS calls are on the path.
 *
 * Every case:
 *   - the client sees a 503 problem+json with Retry-After, or a success (a failed SQS publish,
 *     notification bookkeeping or idempotency completion is swallowed by design: the success is then
 *     checked to be true, i.e. the data is stored);
 *   - never a half-written record: every lab result version carries its ciphertext and is either
 *     current or left pending for the retry job (which moves the pointer); every pointer names a
 *     version that exists; every S3 part a version names exists, and after the retry no S3 part is
 *     orphaned; no idempotency claim is left in progress by a failed attempt; every form packet
 *     carries its ciphertext and a state index matching its state (a packet in pending_match is fine:
 *     the sweeper re-queues it, proven at the end);
 *   - the retry of the same request (same x-request-id, same body / submissionId) completes the
 *     work exactly once: one version (one notification), one packet (one "received" entry, at most
 *     one matching message), one routing (one history entry, the known link remembered), and a
 *     success audit record.
 * Plus: a dependency slower than the Lambda deadline (the function answers 503 before its timeout
 * while the late call still completes in the background) on each write path, and a lasting
 * (non-retryable) failure after the writes (500 that does not claim "nothing was changed").
 */
import { DeleteItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { unmarshall } from '../../lib/aws/attribute-values';
import { randomBytes } from 'node:crypto';
import { dynamoDbClient, sqsClient } from '../../lib/aws/clients';
import { formsDependencies, formsEncryptor } from '../../lib/forms/forms-wiring';
import { matchPacket } from '../../lib/forms/matching';
import { packetIdFor } from '../../lib/forms/packet-id';
import { statePkFor } from '../../lib/forms/packet-store';
import { INBOX_STATES, type PacketState } from '../../lib/forms/types';
import type { LocalStack } from '../../lib/local/stack';
import { clearResultKeysCache, LOOKUP_KEY_ITEM } from '../../lib/results/lookup-keys';
import { clearMatchKeyCache } from '../../lib/forms/match-keys';
import { receiveDependencies } from '../../lib/results/result-wiring';
import { NotificationLedger, notificationMarkerKey } from '../../lib/results/notification-ledger';
import { versionRecordOf } from '../../lib/results/result-items';
import { labResultEncryptor } from '../../lib/results/result-wiring';
import { handler as retryNotifications } from '../../functions/retryResultNotifications';
import { handler as sweep } from '../../functions/sweepPendingPackets';
import {
  BULK_KEYS,
  FAULT_KINDS,
  FaultInjector,
  formBody,
  invokeWithDeadline,
  jsonPost,
  labBody,
  listObjectKeys,
  problemShapeIssues,
  quietLogs,
  scanAll,
  send,
  startReliabilityStack,
  Tally,
  unique,
  type FaultKind,
  type Res,
} from './support';

let stack: LocalStack;
let faults: FaultInjector;
const suiteTally = new Tally('faults (all write paths)');
const successSteps = new Set<string>();

let logs: ReturnType<typeof quietLogs>;

beforeAll(async () => {
  logs = quietLogs();
  stack = await startReliabilityStack();
  faults = new FaultInjector().install();
});

afterAll(async () => {
  logs?.restore();
  faults?.restore();
  await stack?.close();
});

// ------------------------------------------------------------------ shared checks

function unavailableIssues(res: Res): string[] {
  const issues = problemShapeIssues(res);
  if (res.status !== 503) issues.unshift(`status ${res.status} (${res.body.slice(0, 160)})`);
  if (!/^\d+$/.test(res.headers['retry-after'] ?? '') || Number(res.headers['retry-after']) < 1) issues.push('no Retry-After');
  return issues;
}

const messagesByKey = new Map<string, number>();

/** Receives and deletes everything on a queue; counts message bodies by `keyOf`. */
async function drain(url: string, keyOf: (body: Record<string, unknown>) => string | undefined): Promise<void> {
  for (;;) {
    const out = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return;
    for (const m of messages) {
      const key = keyOf(JSON.parse(m.Body ?? '{}') as Record<string, unknown>);
      if (key) messagesByKey.set(key, (messagesByKey.get(key) ?? 0) + 1);
    }
    await sqsClient().send(
      new DeleteMessageBatchCommand({ QueueUrl: url, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
    );
  }
}
const drainNotifications = () => drain(stack.queues.notifications.url, (b) => (typeof b.versionId === 'string' ? `lv:${b.versionId}` : undefined));
const drainMatching = () => drain(stack.queues.matching.url, (b) => (typeof b.packetId === 'string' ? `fp:${b.packetId}` : undefined));

const notificationMarkerOf = (resultId: string, versionId: string) =>
  new NotificationLedger(dynamoDbClient(), stack.tables.results).getMarker(resultId, versionId);

async function auditRecordsFor(match: (r: Record<string, unknown>) => boolean): Promise<Array<Record<string, unknown>>> {
  return (await scanAll(stack.tables.audit)).map((i) => unmarshall(i)).filter(match);
}

// ------------------------------------------------------------------ lab results: invariants

async function resultsInvariants(options: { allowOrphanParts: boolean }): Promise<string[]> {
  const issues: string[] = [];
  const raw = await scanAll(stack.tables.results);
  const items = raw.map((i) => unmarshall(i));
  const versions = raw.filter((i) => String(i.sk?.S).startsWith('VERSION#'));
  const pointers = new Map(items.filter((i) => i.sk === 'CURRENT').map((p) => [String(p.pk), p]));
  // owed notifications of versions stored since issue 31 item 2: marker items in NOTIFY#PENDING#<nn>, sk <resultId>#<versionId>
  const markers = new Set(items.filter((i) => /^NOTIFY#PENDING#\d{2}$/.test(String(i.pk))).map((m) => `${String(m.pk)}|${String(m.sk)}`));
  const versionKeys = new Set(versions.map((v) => `${v.pk!.S!}|${v.sk!.S!}`));
  const objects = new Set(await listObjectKeys(stack));
  const referenced = new Set<string>();
  for (const item of versions) {
    const v = unmarshall(item);
    const record = versionRecordOf(item);
    const sealed = item.submission?.B !== undefined;
    if (!sealed && (typeof v.envelope !== 'string' || typeof v.summary !== 'string')) issues.push(`version ${record.versionId} without its ciphertext`);
    for (const key of record.documentKeys) {
      referenced.add(key);
      if (!objects.has(key)) issues.push(`version ${record.versionId} names a missing S3 part`);
    }
    const pointer = pointers.get(String(v.pk));
    const current = pointer !== undefined && String(pointer.rank) >= record.rank;
    let pendingForRetry: boolean;
    if (sealed) {
      const { pk, sk } = notificationMarkerKey(record.resultId, record.versionId);
      pendingForRetry = markers.has(`${pk}|${sk}`);
    } else {
      // the retry job reads NOTIFY#PENDING#<nn> (its shards) and the legacy NOTIFY#PENDING
      const inRetryIndex = typeof v.patientPk === 'string' && /^NOTIFY#PENDING(#\d{2})?$/.test(v.patientPk);
      pendingForRetry = v.notificationState === 'pending' && inRetryIndex;
      if (v.notificationState === 'pending' && !inRetryIndex) issues.push(`pending version ${record.versionId} missing from the retry index`);
    }
    if (!current && !pendingForRetry) issues.push(`version ${record.versionId} is neither current nor queued for the retry job`);
  }
  for (const p of pointers.values())
    if (!versionKeys.has(`${String(p.pk)}|${String(p.versionSk)}`)) issues.push(`pointer of ${String(p.pk)} names a missing version`);
  if (!options.allowOrphanParts) {
    for (const key of objects) if (key.startsWith('lab-results/') && !referenced.has(key)) issues.push(`orphan S3 part ${key}`);
  }
  return issues;
}

async function inProgressClaims(): Promise<Array<Record<string, unknown>>> {
  return (await scanAll(stack.tables.idempotency)).map((i) => unmarshall(i)).filter((i) => i.state === 'in_progress');
}

// ------------------------------------------------------------------ forms: invariants

async function formsInvariants(): Promise<string[]> {
  const issues: string[] = [];
  const packets = (await scanAll(stack.tables.forms)).map((i) => unmarshall(i)).filter((i) => i.sk === 'PACKET');
  for (const p of packets) {
    const id = String(p.packetId);
    let ctx: Record<string, unknown> | undefined;
    try {
      ctx = (JSON.parse(String(p.content)) as { ctx?: Record<string, unknown> }).ctx;
    } catch {
      ctx = undefined;
    }
    if (typeof p.content !== 'string' || ctx?.packetId !== id) issues.push(`packet ${id} without its ciphertext`);
    const state = p.state as PacketState;
    const expectedPk = INBOX_STATES.includes(state) ? statePkFor(state, id) : `PATIENT#${String(p.patientId)}`;
    if (p.statePk !== expectedPk) issues.push(`packet ${id} in ${state} indexed under ${String(p.statePk)}`);
    if (!String(p.stateSk).endsWith(`#${id}`)) issues.push(`packet ${id} stateSk malformed`);
    const history = (p.history as Array<{ action: string }> | undefined) ?? [];
    if (history.filter((h) => h.action === 'received').length !== 1)
      issues.push(`packet ${id} has ${history.filter((h) => h.action === 'received').length} received entries`);
    if (history.filter((h) => h.action === 'routed_manually').length > 1) issues.push(`packet ${id} routed manually more than once`);
  }
  return issues;
}

// ------------------------------------------------------------------ scenarios

interface Attempt {
  res: Res;
  trace: string[];
  /** 0-based index and name of the call that failed */
  failedIndex: number;
  failedCall: string;
}

interface Scenario {
  name: string;
  /** resets caches / state so that the request takes the same path every time */
  prepare(): Promise<void>;
  /** a fresh request (new accession / submission / packet) */
  build(): Promise<{ send: () => Promise<Res>; ctx: Record<string, string> }>;
  /** checks after the retry; returns issues */
  verify(ctx: Record<string, string>, first: Attempt, retry: Res): Promise<string[]>;
  /** invariants after any attempt */
  invariants(afterRetry: boolean): Promise<string[]>;
}

async function runScenario(scenario: Scenario): Promise<Tally> {
  const tally = new Tally(`faults ${scenario.name}`);
  // one request first: the authorizer's rate limiter remembers a key's counter item from its last
  // write (lib/keys/rate-limiter.ts), so only a container's first request of a key reads it; after
  // this one the reference and every case take the same path
  await scenario.prepare();
  await (await scenario.build()).send();
  await drainNotifications();
  await drainMatching();
  // the reference trace
  await scenario.prepare();
  const reference = await scenario.build();
  faults.arm(undefined);
  const refRes = await reference.send();
  const trace = faults.trace();
  faults.disarm();
  if (refRes.status >= 300) throw new Error(`${scenario.name}: reference request answered ${refRes.status} ${refRes.body}`);
  await drainNotifications();
  await drainMatching();

  for (let step = 1; step <= trace.length; step++) {
    for (const kind of FAULT_KINDS) {
      const issues = await runCase(scenario, step, kind, trace);
      tally.record(issues, () => `${scenario.name} step ${step} (${trace[step - 1]}) ${kind}`);
      suiteTally.record(issues, () => `${scenario.name} step ${step} (${trace[step - 1]}) ${kind}`);
    }
  }
  tally.print(`${trace.length} AWS calls: ${trace.join(' ')}`);
  return tally;
}

async function runCase(scenario: Scenario, step: number, kind: FaultKind, reference: string[]): Promise<string[]> {
  const issues: string[] = [];
  await scenario.prepare();
  const req = await scenario.build();
  faults.arm(step, kind);
  const res = await req.send();
  const trace = faults.trace();
  faults.disarm();
  const failed = faults.calls.find((c) => c.failed);
  const first: Attempt = { res, trace, failedIndex: step - 1, failedCall: trace[step - 1] ?? '' };
  if (!failed) issues.push(`call ${step} never happened (trace ${trace.join(' ')})`);
  else if (trace.slice(0, step).join() !== reference.slice(0, step).join()) issues.push(`path differs from the reference: ${trace.slice(0, step).join(' ')}`);

  if (res.status >= 200 && res.status < 300) successSteps.add(`${scenario.name}: ${reference[step - 1]} (step ${step}) -> ${res.status}`);
  else issues.push(...unavailableIssues(res).map((i) => `first attempt: ${i}`));
  issues.push(...(await scenario.invariants(false)).map((i) => `after the fault: ${i}`));
  const claims = await inProgressClaims();
  if (res.status === 503 && claims.length > 0) issues.push(`a failed attempt left ${claims.length} idempotency claim(s) in progress`);

  // the retry of the same request
  let retry = await req.send();
  // the HL7 intake says "in progress" as an ACK: AE with ERR-3 206 (application record locked)
  const hl7InProgress = (r: Res) => r.status === 200 && /\rMSA\|AE\|/.test(r.body) && /\rERR\|[^\r]*\|206\^/.test(r.body);
  if (hl7InProgress(retry) && res.status === 200 && claims.length === 1) {
    await dynamoDbClient().send(
      new UpdateItemCommand({
        TableName: stack.tables.idempotency,
        Key: { pk: { S: String(claims[0]!.pk) } },
        UpdateExpression: 'SET leaseUntil = :past',
        ExpressionAttributeValues: { ':past': { N: '0' } },
      }),
    );
    retry = await req.send();
  }
  if (retry.status === 409 && retry.json<{ type?: string }>().type === '/problems/request-in-progress' && res.status === 200 && claims.length === 1) {
    // the first attempt succeeded but could not record its response: by design the same request
    // waits for the lease (Retry-After), then takes the claim over and replays the stored work
    if (!/^\d+$/.test(retry.headers['retry-after'] ?? '')) issues.push('409 in progress without Retry-After');
    await dynamoDbClient().send(
      new UpdateItemCommand({
        TableName: stack.tables.idempotency,
        Key: { pk: { S: String(claims[0]!.pk) } },
        UpdateExpression: 'SET leaseUntil = :past',
        ExpressionAttributeValues: { ':past': { N: '0' } },
      }),
    );
    retry = await req.send();
  }
  if (retry.status < 200 || retry.status >= 300) issues.push(`retry answered ${retry.status}: ${retry.body.slice(0, 200)}`);
  issues.push(...(await scenario.invariants(true)).map((i) => `after the retry: ${i}`));
  if ((await inProgressClaims()).length > 0) issues.push('an idempotency claim is still in progress after the retry');
  issues.push(...(await scenario.verify(req.ctx, first, retry)));
  return issues;
}

// ------------------------------------------------------------------ POST /receiveTestData

function coldCaches(): void {
  labResultEncryptor().clearCache();
  formsEncryptor().clearCache();
  clearResultKeysCache();
  // the match-index HMAC key (forms intake fingerprints every packet with it)
  clearMatchKeyCache();
}

function labScenario(name: string, options: { cold?: boolean; bootstrap?: boolean; s3?: boolean; noRequestId?: boolean }): Scenario {
  return {
    name,
    async prepare() {
      if (options.bootstrap) {
        await dynamoDbClient().send(
          new DeleteItemCommand({ TableName: stack.tables.results, Key: { pk: { S: LOOKUP_KEY_ITEM.pk }, sk: { S: LOOKUP_KEY_ITEM.sk } } }),
        );
      }
      if (options.cold || options.bootstrap) coldCaches();
    },
    async build() {
      const accession = unique('FLT');
      const body = labBody({
        accessionNumber: accession,
        patientID: 'demo-patient-2',
        ...(options.s3 ? { reports: [{ source: 'base64', type: 'pdf', name: 'big.pdf', data: randomBytes(20_000).toString('base64') }] } : {}),
      });
      const requestId = unique('flt-req');
      const headers: Record<string, string> = options.noRequestId ? {} : { 'x-request-id': requestId };
      return { send: () => send(jsonPost('/receiveTestData', BULK_KEYS.results.secret, body, headers)), ctx: { accession, requestId } };
    },
    invariants: (afterRetry) => resultsInvariants({ allowOrphanParts: !afterRetry }),
    async verify(ctx, first, retry) {
      const issues: string[] = [];
      const out = retry.json<{ resultId?: string; version?: string; requestId?: string }>();
      if (!out.resultId || !out.version) return ['retry body has no resultId/version'];
      if (first.res.status === 200) {
        const firstOut = first.res.json<{ resultId: string; version: string }>();
        if (firstOut.resultId !== out.resultId || firstOut.version !== out.version) issues.push('first success and retry name different versions');
      }
      if (!options.noRequestId && out.requestId !== ctx.requestId) issues.push('retry requestId differs');
      // notifications: the retry job sends what the request could not
      await retryNotifications({}, { getRemainingTimeInMillis: () => 60_000 });
      await drainNotifications();
      const items = (await scanAll(stack.tables.results)).map((i) => unmarshall(i)).filter((i) => i.pk === `RESULT#${out.resultId}`);
      const versions = items.filter((i) => String(i.sk).startsWith('VERSION#'));
      const pointer = items.find((i) => i.sk === 'CURRENT');
      if (versions.length !== 1) issues.push(`${versions.length} versions stored (want exactly 1)`);
      if (pointer?.versionId !== out.version) issues.push('the current pointer does not name the version');
      const sent = messagesByKey.get(`lv:${out.version}`) ?? 0;
      const version = versions[0];
      // the publish went out but marking it sent failed: delivery is at least once (consumers deduplicate on notificationId)
      // (the bookkeeping: the marker's DeleteItem; an UpdateItem of the version item in the layout before issue 31 item 2)
      const markFailed =
        (first.failedCall === 'dynamodb:DeleteItemCommand' || first.failedCall === 'dynamodb:UpdateItemCommand') &&
        first.trace[first.failedIndex - 1] === 'sqs:SendMessageCommand';
      if (markFailed ? sent < 1 || sent > 2 : sent !== 1) issues.push(`${sent} notifications for the version (want ${markFailed ? '1-2' : '1'})`);
      const marker = version ? await notificationMarkerOf(String(out.resultId), String(out.version)) : undefined;
      if (marker) {
        // only allowed when the publish went out but its bookkeeping failed: the retry job resends later (at least once)
        if (!(markFailed && sent === 1 && marker.dueAt > new Date().toISOString())) issues.push('notification still owed (its marker is there)');
      }
      const audits = await auditRecordsFor((r) => (r.resourceIds as Record<string, string> | undefined)?.resultId === out.resultId && r.outcome === 'success');
      if (audits.length === 0) issues.push('no success audit record for the stored result');
      return issues;
    },
  };
}

describe('faults: POST /receiveTestData', () => {
  beforeAll(async () => {
    // warm everything once (the lookup key exists, data keys cached)
    const res = await send(jsonPost('/receiveTestData', BULK_KEYS.results.secret, labBody(), { 'x-request-id': unique('warm') }));
    expect(res.status).toBe(200);
  });

  const scenarios = [
    labScenario('lab warm', {}),
    labScenario('lab warm, no x-request-id', { noRequestId: true }),
    labScenario('lab cold caches', { cold: true }),
    labScenario('lab cold caches, report in S3', { cold: true, s3: true }),
    labScenario('lab first result ever (lookup key created)', { bootstrap: true }),
  ];
  for (const scenario of scenarios) {
    it(`${scenario.name}: every step x every fault -> 503 + Retry-After or success; retry completes exactly once`, async () => {
      const tally = await runScenario(scenario);
      expect(tally.report()).toEqual([]);
      expect(tally.failed).toBe(0);
    });
  }
});

// ------------------------------------------------------------------ POST /receiveHl7

/** An ORU^R01 for demo-patient-2 (PID-3 its MRN) from DEMO-LAB-LIS, a sender the all-scopes key's partner (demo-lab) may use. */
function oruMessage(controlId: string, accession: string): string {
  return (
    [
      `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${controlId}|P|2.5.1`,
      'PID|1||DEMO-000002^^^DEMO-HOSP^MR||Example^Jamie',
      `OBR|1|ORD1|${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
      'OBX|1|NM|2345-7^Glucose^LN||98.4|mg/dL|70-99|N|||F',
    ].join('\r') + '\r'
  );
}

function hl7Scenario(name: string, options: { cold?: boolean }): Scenario {
  return {
    name,
    async prepare() {
      if (options.cold) coldCaches();
    },
    async build() {
      const accession = unique('HFL');
      // MSH-10 is at most 20 characters
      const controlId = `F${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`.slice(0, 20);
      const body = Buffer.from(oruMessage(controlId, accession));
      const headers: Array<[string, string]> = [
        ['x-api-key', BULK_KEYS.all.secret],
        ['content-type', 'application/hl7-v2'],
      ];
      return { send: () => send({ method: 'POST', url: '/receiveHl7', headers, body }), ctx: { accession, controlId } };
    },
    invariants: (afterRetry) => resultsInvariants({ allowOrphanParts: !afterRetry }),
    async verify(ctx, first, retry) {
      const issues: string[] = [];
      const msa = (res: Res) => res.body.split('\r').find((segment) => segment.startsWith('MSA|')) ?? '';
      if (msa(retry) !== `MSA|AA|${ctx.controlId}`) issues.push(`retry ACK ${msa(retry).slice(0, 60)}`);
      if (first.res.status === 200 && !msa(first.res).startsWith('MSA|A')) issues.push(`first 200 without an ACK: ${first.res.body.slice(0, 80)}`);
      // the stored result (its id from the sender, MSH-4, and the accession): exactly one version, current, audited
      // one result per (sender, accession, universal service): OBR-4 GLU
      const resultId = (await receiveDependencies().keys()).resultId('DEMO-LAB-LIS', ctx.accession!, 'GLU');
      const items = (await scanAll(stack.tables.results)).map((i) => unmarshall(i)).filter((i) => i.pk === `RESULT#${resultId}`);
      const versions = items.filter((i) => String(i.sk).startsWith('VERSION#'));
      if (versions.length !== 1) issues.push(`${versions.length} versions stored (want exactly 1)`);
      if (!items.some((i) => i.sk === 'CURRENT')) issues.push('no current pointer');
      const audits = await auditRecordsFor(
        (r) => r.action === 'hl7.oru.results_store' && r.outcome === 'success' && (r.resourceIds as Record<string, string> | undefined)?.resultIds === resultId,
      );
      if (audits.length === 0) issues.push('no success audit record for the stored result');
      await retryNotifications({}, { getRemainingTimeInMillis: () => 60_000 });
      await drainNotifications();
      return issues;
    },
  };
}

describe('faults: POST /receiveHl7', () => {
  beforeAll(async () => {
    const res = await send({
      method: 'POST',
      url: '/receiveHl7',
      headers: [
        ['x-api-key', BULK_KEYS.all.secret],
        ['content-type', 'application/hl7-v2'],
      ],
      body: oruMessage(`W${Date.now().toString(36)}`, unique('HWM')),
    });
    expect(res.status).toBe(200);
  });

  for (const scenario of [hl7Scenario('hl7 ORU warm', {}), hl7Scenario('hl7 ORU cold caches', { cold: true })]) {
    it(`${scenario.name}: every step x every fault -> 503 + Retry-After or an ACK; the resend completes exactly once`, async () => {
      const tally = await runScenario(scenario);
      expect(tally.report()).toEqual([]);
      expect(tally.failed).toBe(0);
    });
  }
});

// ------------------------------------------------------------------ POST /receiveFormIntakeScope

function formScenario(name: string, route: 'match' | 'known' | 'unknown'): Scenario {
  return {
    name,
    async prepare() {
      coldCaches();
    },
    async build() {
      const patientId = route === 'known' ? { patientId: 'demo-patient-3' } : route === 'unknown' ? { patientId: unique('nobody') } : {};
      // a named patient is routed only when the packet's demographics agree with the chart (issue 12)
      const body = route === 'known' ? formBody(patientId, { firstName: 'Robin', lastName: 'Example', dob: '1975-06-30' }) : formBody(patientId);
      const packetId = packetIdFor(BULK_KEYS.forms.partnerId, String(body.payload.sourceSystemId), String(body.payload.submissionId));
      const requestId = unique('flt-form');
      return { send: () => send(jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, body, { 'x-request-id': requestId })), ctx: { packetId } };
    },
    invariants: () => formsInvariants(),
    async verify(ctx, first, retry) {
      const issues: string[] = [];
      const out = retry.json<{ packetId?: string; status?: string }>();
      if (out.packetId !== ctx.packetId) issues.push('retry names another packet');
      // intake answers 202 accepted whatever happened (issue 12); the state is read from the table
      if (retry.status !== 202 || out.status !== 'accepted') issues.push(`retry ${retry.status} ${String(out.status)}, want 202 accepted`);
      const expectedState = route === 'known' ? 'routed' : route === 'unknown' ? 'pending_review' : 'pending_match';
      const packets = (await scanAll(stack.tables.forms)).map((i) => unmarshall(i)).filter((i) => i.packetId === ctx.packetId && i.sk === 'PACKET');
      if (packets.length !== 1) issues.push(`${packets.length} packets stored`);
      else if (packets[0]!.state !== expectedState && !(route === 'match' && packets[0]!.state !== 'routed'))
        issues.push(`stored state ${String(packets[0]!.state)}, want ${expectedState}`);
      await drainMatching();
      const queued = messagesByKey.get(`fp:${ctx.packetId}`) ?? 0;
      const sendFailed = first.failedCall === 'sqs:SendMessageCommand';
      if (route === 'known' && queued !== 0) issues.push('a routed packet was queued');
      if (route !== 'known' && queued > 1) issues.push(`${queued} matching messages for one packet`);
      if (route !== 'known' && queued === 0 && !sendFailed) issues.push('the packet was never queued and the queue send did not fail');
      const audits = await auditRecordsFor(
        (r) =>
          (r.resourceIds as Record<string, string> | undefined)?.packetId === ctx.packetId &&
          r.outcome === 'success' &&
          String(r.action).startsWith('forms.receive'),
      );
      if (audits.length === 0) issues.push('no success audit record for the packet');
      return issues;
    },
  };
}

describe('faults: POST /receiveFormIntakeScope', () => {
  const scenarios = [
    formScenario('forms, no patientId (pending_match, queued)', 'match'),
    formScenario('forms, known patientId (routed)', 'known'),
    formScenario('forms, unknown patientId (pending_review, queued)', 'unknown'),
  ];
  for (const scenario of scenarios) {
    it(`${scenario.name}: every step x every fault -> 503 + Retry-After or success; retry completes exactly once`, async () => {
      const tally = await runScenario(scenario);
      expect(tally.report()).toEqual([]);
      expect(tally.failed).toBe(0);
    });
  }

  it('every packet a fault left in pending_match without a queue message is re-queued by the sweeper', async () => {
    await drainMatching();
    const pending = (await scanAll(stack.tables.forms)).map((i) => unmarshall(i)).filter((i) => i.sk === 'PACKET' && i.state === 'pending_match');
    expect(pending.length).toBeGreaterThan(0);
    messagesByKey.clear();
    await sweep({ thresholdSeconds: 0 });
    await drainMatching();
    const missing = pending.filter((p) => (messagesByKey.get(`fp:${String(p.packetId)}`) ?? 0) === 0).map((p) => String(p.packetId));
    console.log(`faults sweeper: ${pending.length} pending_match packets, ${pending.length - missing.length} re-queued`);
    expect(missing).toEqual([]);
  });
});

// ------------------------------------------------------------------ POST /interopInbox/{id}/route

async function packetWithLink(): Promise<string> {
  // two demo patients share this name and birth date: the matcher holds the packet for review (ambiguous) and records its link key
  const body = formBody({}, { firstName: 'Robin', lastName: 'Example', dob: '1975-06-30', email: undefined, externalPatientId: unique('robin') });
  const res = await send(jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, body));
  if (res.status !== 202) throw new Error(`packet not created: ${res.status}`);
  const packetId = res.json<{ packetId: string }>().packetId;
  await matchPacket(packetId, formsDependencies());
  return packetId;
}

async function plainPacket(): Promise<string> {
  const res = await send(jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, formBody()));
  if (res.status !== 202) throw new Error(`packet not created: ${res.status}`);
  return res.json<{ packetId: string }>().packetId;
}

function routeScenario(name: string, withLink: boolean): Scenario {
  return {
    name,
    async prepare() {
      coldCaches();
    },
    async build() {
      const packetId = withLink ? await packetWithLink() : await plainPacket();
      const requestId = unique('flt-route');
      const patientId = 'demo-patient-4';
      return {
        send: () => send(jsonPost(`/interopInbox/${packetId}/route`, BULK_KEYS.inbox.secret, { patientId }, { 'x-request-id': requestId })),
        ctx: { packetId, patientId },
      };
    },
    invariants: () => formsInvariants(),
    async verify(ctx, _first, retry) {
      const issues: string[] = [];
      if (retry.status !== 200) return [`retry answered ${retry.status}`];
      const items = (await scanAll(stack.tables.forms)).map((i) => unmarshall(i));
      const packet = items.find((i) => i.packetId === ctx.packetId && i.sk === 'PACKET');
      if (!packet) return ['packet vanished'];
      if (packet.state !== 'routed_manually' || packet.patientId !== ctx.patientId) issues.push(`packet in ${String(packet.state)}`);
      const routed = ((packet.history as Array<{ action: string }>) ?? []).filter((h) => h.action === 'routed_manually').length;
      if (routed !== 1) issues.push(`${routed} routed_manually entries`);
      if (packet.linkKey) {
        const link = items.find((i) => i.pk === `LINK#${String(packet.linkKey)}`);
        if (link?.patientId !== ctx.patientId) issues.push('the reviewer decision (known link) was not remembered');
      } else if (withLink) issues.push('the scenario packet has no link key');
      const audits = await auditRecordsFor(
        (r) => (r.resourceIds as Record<string, string> | undefined)?.packetId === ctx.packetId && r.action === 'inbox.route' && r.outcome === 'success',
      );
      if (audits.length === 0) issues.push('no success audit record for the routing');
      return issues;
    },
  };
}

/*
 * Manual routing was not idempotent once the conditional transition had succeeded (a fault in the
 * link PutItem or the audit PutItem answered 503, and the retry answered 409: link lost, no success
 * audit record). Fixed in ebaed43 (lib/forms/inbox.ts: repeating a routing to the same patient
 * finishes the remaining work and answers 200). Every step is now tried, the steps after the state
 * change included: they are the regression test.
 */
describe('faults: POST /interopInbox/{packetId}/route', () => {
  const scenarios = [routeScenario('route, pending_match packet', false), routeScenario('route, pending_review packet with a link key', true)];
  for (const scenario of scenarios) {
    it(`${scenario.name}: every step x every fault -> 503 + Retry-After or success; retry routes exactly once`, async () => {
      const tally = await runScenario(scenario);
      expect(tally.report()).toEqual([]);
      expect(tally.failed).toBe(0);
    });
  }
});

// ------------------------------------------------------------------ a dependency slower than the Lambda deadline

describe('faults: a dependency slower than the function deadline', () => {
  const DEADLINE_MS = 1500; // the pipeline answers 1000 ms before it
  const HANG_MS = 1500;

  /** The AWS calls of a request on warm caches: one request to warm them, the trace of the next. */
  async function warmTrace(request: () => Promise<Res>): Promise<string[]> {
    await request();
    faults.arm(undefined);
    const res = await request();
    expect(res.status).toBeLessThan(300);
    return faults.trace();
  }

  async function settle(): Promise<void> {
    // the late call and the rest of the handler finish in the background
    await new Promise((r) => setTimeout(r, HANG_MS + 500));
  }

  /** The retry; while the background work still holds the idempotency claim it answers 409 + Retry-After: come back. */
  async function retryUntilDone(req: Parameters<typeof send>[0]): Promise<Res> {
    let res = await send(req);
    for (let i = 0; res.status === 409 && res.json<{ type?: string }>().type === '/problems/request-in-progress' && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 250));
      res = await send(req);
    }
    return res;
  }

  it('POST /receiveTestData: 503 + Retry-After before the deadline; the retry answers with the one version the late work stored', async () => {
    const body = labBody({ accessionNumber: unique('DL') });
    const req = jsonPost('/receiveTestData', BULK_KEYS.results.secret, body, { 'x-request-id': unique('dl-lab') });
    const trace = await warmTrace(() => send(jsonPost('/receiveTestData', BULK_KEYS.results.secret, labBody(), { 'x-request-id': unique('dl-ref') })));
    // PutItem #1 is the idempotency claim, #2 the version item
    const claim = trace.indexOf('dynamodb:PutItemCommand');
    const versionPut = trace.indexOf('dynamodb:PutItemCommand', claim + 1);
    expect(versionPut).toBeGreaterThan(claim);
    faults.armHang(versionPut + 1, HANG_MS);
    const first = await invokeWithDeadline(req, DEADLINE_MS);
    faults.disarm();
    expect(unavailableIssues(first)).toEqual([]);
    await settle();
    const retry = await retryUntilDone(req);
    expect(retry.status).toBe(200);
    const out = retry.json<{ resultId: string; version: string }>();
    const versions = (await scanAll(stack.tables.results))
      .map((i) => unmarshall(i))
      .filter((i) => i.pk === `RESULT#${out.resultId}` && String(i.sk).startsWith('VERSION#'));
    expect(versions).toHaveLength(1);
    expect(await resultsInvariants({ allowOrphanParts: false })).toEqual([]);
    suiteTally.record([], () => '');
  });

  it('POST /receiveFormIntakeScope: 503 + Retry-After before the deadline; the retry answers with the one packet', async () => {
    const body = formBody();
    const packetId = packetIdFor(BULK_KEYS.forms.partnerId, String(body.payload.sourceSystemId), String(body.payload.submissionId));
    const req = jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, body, { 'x-request-id': unique('dl-form') });
    const trace = await warmTrace(() => send(jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, formBody())));
    faults.armHang(trace.indexOf('dynamodb:PutItemCommand') + 1, HANG_MS);
    const first = await invokeWithDeadline(req, DEADLINE_MS);
    faults.disarm();
    expect(unavailableIssues(first)).toEqual([]);
    await settle();
    const retry = await send(req);
    expect([200, 202]).toContain(retry.status);
    expect(retry.json<{ packetId: string }>().packetId).toBe(packetId);
    expect(await formsInvariants()).toEqual([]);
    suiteTally.record([], () => '');
  });

  /* Was a BUG (route not idempotent, fixed in ebaed43): the late transition lands after the 503; the retry must answer 200. */
  it('POST /interopInbox/{id}/route: 503 + Retry-After before the deadline; the retry completes the routing', async () => {
    const packetId = await plainPacket();
    const req = jsonPost(`/interopInbox/${packetId}/route`, BULK_KEYS.inbox.secret, { patientId: 'demo-patient-4' }, { 'x-request-id': unique('dl-route') });
    const trace = await warmTrace(async () => {
      const other = await plainPacket();
      faults.arm(undefined);
      return send(jsonPost(`/interopInbox/${other}/route`, BULK_KEYS.inbox.secret, { patientId: 'demo-patient-4' }));
    });
    faults.armHang(trace.lastIndexOf('dynamodb:UpdateItemCommand') + 1, HANG_MS);
    const first = await invokeWithDeadline(req, DEADLINE_MS);
    faults.disarm();
    expect(unavailableIssues(first)).toEqual([]);
    await settle();
    const retry = await send(req);
    expect(retry.status).toBe(200);
    expect(await formsInvariants()).toEqual([]);
    suiteTally.record([], () => '');
  });
});

/*
 * BUG (lib/http/endpoint.ts line 38-43 with @middy/core: `timeoutEarlyInMillis` races the handler only;
 * the audit append runs in auditRecording's `after` middleware, outside that race): when the audit
 * PutItem is slow (throttled table, network stall), nothing answers before the Lambda deadline: the
 * function runs past its timeout and, in the cloud, Lambda kills it and API Gateway answers 502/504
 * without problem+json, x-request-id or Retry-After, although the data was already stored. Every
 * other slow call on the path gets the 503 + Retry-After early answer (tests above). Repro: hang the
 * audit PutItem of POST /receiveTestData for 2 s with a 1.5 s deadline: the answer comes after 2 s.
 * Fix: give the after-middleware work (the audit append) its own deadline (e.g. race it against
 * getRemainingTimeInMillis() - margin and answer 503). Flip to `it` once fixed.
 */
describe('faults: a slow audit append near the deadline', () => {
  it('is answered 503 + Retry-After before the deadline, not after it (BUG: early timeout does not cover the audit append)', async () => {
    await send(jsonPost('/receiveTestData', BULK_KEYS.results.secret, labBody(), { 'x-request-id': unique('slow-audit-warm') }));
    faults.arm(undefined);
    await send(jsonPost('/receiveTestData', BULK_KEYS.results.secret, labBody(), { 'x-request-id': unique('slow-audit-ref') }));
    const trace = faults.trace();
    expect(trace[trace.length - 1]).toBe('dynamodb:PutItemCommand'); // the audit append
    faults.armHang(trace.length, 2000);
    const started = Date.now();
    const res = await invokeWithDeadline(
      jsonPost('/receiveTestData', BULK_KEYS.results.secret, labBody({ accessionNumber: unique('SLOW') }), { 'x-request-id': unique('slow-audit') }),
      1500,
    );
    const elapsed = Date.now() - started;
    faults.disarm();
    console.log(`faults slow audit append: answered ${res.status} after ${elapsed} ms (deadline 1500 ms)`);
    expect(elapsed).toBeLessThan(1500);
    expect(unavailableIssues(res)).toEqual([]);
  });
});

/*
 * Was a BUG, fixed in ebaed43 (lib/http/middleware/http-responses.ts, onError, line 62: every
 * non-HttpProblem, non-retryable error became 500 "the request could not be completed; nothing was
 * changed"), false when the error happens after the writes: e.g. the audit append after a stored lab
 * result fails with a lasting error (AccessDeniedException: a broken IAM policy) while the version,
 * pointer, notification and idempotency record are all written, and the retry of the same request
 * replays a 200 for that very version. Regression test.
 */
describe('faults: a lasting (non-retryable) failure after the writes', () => {
  it('is not answered "nothing was changed" when the result was stored (was a BUG: http-responses 500 detail)', async () => {
    await send(jsonPost('/receiveTestData', BULK_KEYS.results.secret, labBody(), { 'x-request-id': unique('denied-warm') }));
    faults.arm(undefined);
    await send(jsonPost('/receiveTestData', BULK_KEYS.results.secret, labBody(), { 'x-request-id': unique('denied-ref') }));
    const trace = faults.trace();
    expect(trace[trace.length - 1]).toBe('dynamodb:PutItemCommand'); // the audit append
    const req = jsonPost('/receiveTestData', BULK_KEYS.results.secret, labBody({ accessionNumber: unique('DENIED') }), { 'x-request-id': unique('denied') });
    faults.arm(trace.length, 'denied');
    const first = await send(req);
    faults.disarm();
    const retry = await send(req);
    expect(retry.status).toBe(200); // the work had been done: the retry replays it
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(first.status).toBe(500);
    expect(first.json<{ detail: string }>().detail).not.toMatch(/nothing was changed/);
    expect(problemShapeIssues(first)).toEqual([]);
    suiteTally.record([], () => '');
  });
});

describe('faults: summary', () => {
  it('prints the suite summary', () => {
    suiteTally.print();
    console.log(`faults: steps where the request succeeded despite the fault (by design):\n  ${[...successSteps].sort().join('\n  ')}`);
    expect(suiteTally.failed).toBe(0);
  });
});
