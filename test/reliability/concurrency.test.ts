/**
 * Reliability suite 3: concurrency, over real HTTP (node http server in front of the emulated
 * gateway), everything in flight at once.
 *
 *   - 50 parallel identical lab submissions with the same x-request-id: one stored version; every
 *     answer is the first response (200, same version) or 409 request-in-progress with Retry-After,
 *     and retrying those gives the same 200; one notification.
 *   - 50 parallel identical lab submissions without x-request-id: still one version.
 *   - 50 parallel form packets with the same submission id (and 50 different x-request-ids): one
 *     packet, every answer 202 accepted naming the same packet.
 *   - 50 parallel routings of one inbox packet to one patient: all 200 (repeating a routing is a
 *     retry), one history entry; to two patients: one patient wins (all its requests 200), the other's
 *     all 409, one history entry.
 *   - rate limits under 200 parallel requests: a key with limit 20 gets exactly 20 non-429 answers
 *     (remaining 19..0, each once); the anonymous limit (20) the same; demo-limited-key (5/60 s) at
 *     most 5.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { unmarshall } from '../../lib/aws/attribute-values';
import { sqsClient } from '../../lib/aws/clients';
import { Scopes } from '../../lib/config/service';
import { packetIdFor } from '../../lib/forms/packet-id';
import type { LocalStack } from '../../lib/local/stack';
import { call, type HttpResult } from '../support/local-stack';
import { BULK_KEYS, createKey, formBody, inboxPacket, labBody, scanAll, send, startReliabilityStack, Tally, unique } from './support';

let stack: LocalStack;
const tally = new Tally('concurrency');

beforeAll(async () => {
  stack = await startReliabilityStack();
});

afterAll(async () => {
  await stack?.close();
});

const PARALLEL = 50;

function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return call(stack, 'POST', path, { headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function drain(url: string): Promise<Array<Record<string, unknown>>> {
  const bodies: Array<Record<string, unknown>> = [];
  for (;;) {
    const out = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return bodies;
    for (const m of messages) bodies.push(JSON.parse(m.Body ?? '{}') as Record<string, unknown>);
    await sqsClient().send(
      new DeleteMessageBatchCommand({ QueueUrl: url, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
    );
  }
}

function histogram(values: Array<number | string>): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(String(v), (counts.get(String(v)) ?? 0) + 1);
  return [...counts.entries()].map(([k, n]) => `${k}x${n}`).join(' ');
}

async function versionsOf(resultId: string): Promise<Array<Record<string, unknown>>> {
  return (await scanAll(stack.tables.results)).map((i) => unmarshall(i)).filter((i) => i.pk === `RESULT#${resultId}` && String(i.sk).startsWith('VERSION#'));
}

/** Waits until `seconds` is not within `marginS` of a multiple of `windowSeconds` (keeps a burst inside one slot range of the sliding window). */
async function awayFromBoundary(windowSeconds: number, marginS: number): Promise<void> {
  const now = Date.now() / 1000;
  const left = windowSeconds - (now % windowSeconds);
  if (left < marginS) await new Promise((r) => setTimeout(r, (left + 0.2) * 1000));
}

describe('concurrency: idempotent writes', () => {
  it(`${PARALLEL} parallel identical lab submissions with one x-request-id store one version`, async () => {
    await drain(stack.queues.notifications.url);
    const body = labBody({ accessionNumber: unique('CONC') });
    const requestId = unique('conc-lab');
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, () => post('/receiveTestData', BULK_KEYS.results.secret, body, { 'x-request-id': requestId })),
    );
    console.log(`concurrency lab, same x-request-id: statuses ${histogram(answers.map((a) => a.status))}`);
    const issues: string[] = [];
    for (const a of answers) {
      if (a.status === 409) {
        if (a.json<{ type: string }>().type !== '/problems/request-in-progress') issues.push(`409 ${a.text}`);
        if (!/^\d+$/.test(a.headers.get('retry-after') ?? '')) issues.push('409 without Retry-After');
      } else if (a.status !== 200) issues.push(`status ${a.status}: ${a.text.slice(0, 200)}`);
    }
    // the callers that were told to come back do so
    const finals = await Promise.all(
      answers.map(async (a) => {
        let res = a;
        for (let i = 0; res.status === 409 && i < 20; i++) {
          await new Promise((r) => setTimeout(r, 100));
          res = await post('/receiveTestData', BULK_KEYS.results.secret, body, { 'x-request-id': requestId });
        }
        return res;
      }),
    );
    const outs = finals.map((f) => f.json<{ resultId: string; version: string; duplicate: boolean }>());
    if (finals.some((f) => f.status !== 200)) issues.push(`final statuses ${histogram(finals.map((f) => f.status))}`);
    if (new Set(outs.map((o) => o.version)).size !== 1) issues.push(`${new Set(outs.map((o) => o.version)).size} different versions answered`);
    const versions = await versionsOf(outs[0]!.resultId);
    if (versions.length !== 1) issues.push(`${versions.length} versions stored`);
    const notes = (await drain(stack.queues.notifications.url)).filter((n) => n.versionId === outs[0]!.version);
    if (notes.length !== 1) issues.push(`${notes.length} notifications`);
    tally.record(issues, () => 'lab same x-request-id');
    expect(issues).toEqual([]);
  });

  it(`${PARALLEL} parallel identical lab submissions without x-request-id store one version`, async () => {
    await drain(stack.queues.notifications.url);
    const body = labBody({ accessionNumber: unique('CONC-NOID') });
    const answers = await Promise.all(Array.from({ length: PARALLEL }, () => post('/receiveTestData', BULK_KEYS.results.secret, body)));
    const issues: string[] = [];
    if (answers.some((a) => a.status !== 200)) issues.push(`statuses ${histogram(answers.map((a) => a.status))}`);
    const outs = answers.filter((a) => a.status === 200).map((a) => a.json<{ resultId: string; version: string; duplicate: boolean }>());
    if (new Set(outs.map((o) => o.version)).size !== 1) issues.push('different versions answered');
    if (outs.filter((o) => !o.duplicate).length !== 1) issues.push(`${outs.filter((o) => !o.duplicate).length} answers say "created" (want 1)`);
    const versions = await versionsOf(outs[0]!.resultId);
    if (versions.length !== 1) issues.push(`${versions.length} versions stored`);
    const notes = (await drain(stack.queues.notifications.url)).filter((n) => n.versionId === outs[0]!.version);
    // delivery is at least once: concurrent duplicates that read the version before it was marked sent publish again
    console.log(`concurrency lab, no x-request-id: ${outs.filter((o) => !o.duplicate).length} created, ${notes.length} notification(s) for the one version`);
    if (notes.length < 1) issues.push('no notification');
    tally.record(issues, () => 'lab no x-request-id');
    expect(issues).toEqual([]);
  });

  it(`${PARALLEL} parallel form packets with one submission id give one packet`, async () => {
    await drain(stack.queues.matching.url);
    const body = formBody();
    const packetId = packetIdFor(BULK_KEYS.forms.partnerId, String(body.payload.sourceSystemId), String(body.payload.submissionId));
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        post('/receiveFormIntakeScope', BULK_KEYS.forms.secret, body, { 'x-request-id': `conc-form-${i}-${packetId}` }),
      ),
    );
    console.log(`concurrency forms: statuses ${histogram(answers.map((a) => a.status))}`);
    const issues: string[] = [];
    // every copy gets the same answer (intake never tells which copy was stored first)
    const accepted = answers.filter((a) => a.status === 202);
    if (accepted.length !== PARALLEL) issues.push(`statuses ${histogram(answers.map((a) => a.status))}`);
    for (const a of accepted) if (a.json<{ packetId: string }>().packetId !== packetId) issues.push('an answer names another packet');
    if (accepted.some((a) => a.json<{ status: string }>().status !== 'accepted')) issues.push('an answer is not accepted');
    const packets = (await scanAll(stack.tables.forms)).map((i) => unmarshall(i)).filter((i) => i.sk === 'PACKET' && i.packetId === packetId);
    if (packets.length !== 1) issues.push(`${packets.length} packets`);
    const received = ((packets[0]?.history as Array<{ action: string }>) ?? []).filter((h) => h.action === 'received').length;
    if (received !== 1) issues.push(`${received} received entries`);
    const queued = (await drain(stack.queues.matching.url)).filter((m) => m.packetId === packetId).length;
    if (queued !== 1) issues.push(`${queued} matching messages`);
    tally.record(issues, () => 'forms same submissionId');
    expect(issues).toEqual([]);
  });

  it(`${PARALLEL} parallel routings of one inbox packet to one patient: all 200 (the same routing), one history entry`, async () => {
    const packetId = await inboxPacket();
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, () => post(`/interopInbox/${packetId}/route`, BULK_KEYS.inbox.secret, { patientId: 'demo-patient-5' })),
    );
    console.log(`concurrency route, one patient: statuses ${histogram(answers.map((a) => a.status))}`);
    const issues: string[] = [];
    // repeating a routing that already happened (same packet, same patient) is answered 200 (docs/forms.md)
    if (answers.some((a) => a.status !== 200)) issues.push(`statuses ${histogram(answers.map((a) => a.status))}`);
    const packet = (await scanAll(stack.tables.forms)).map((i) => unmarshall(i)).find((i) => i.sk === 'PACKET' && i.packetId === packetId);
    const routed = ((packet?.history as Array<{ action: string }>) ?? []).filter((h) => h.action === 'routed_manually').length;
    if (routed !== 1) issues.push(`${routed} routed_manually entries`);
    tally.record(issues, () => 'route same packet, same patient');
    expect(issues).toEqual([]);
  });

  it(`${PARALLEL} parallel routings of one inbox packet to two patients: one patient wins, the other's requests all 409`, async () => {
    const packetId = await inboxPacket();
    const targets = Array.from({ length: PARALLEL }, (_, i) => (i % 2 === 0 ? 'demo-patient-4' : 'demo-patient-5'));
    const answers = await Promise.all(targets.map((patientId) => post(`/interopInbox/${packetId}/route`, BULK_KEYS.inbox.secret, { patientId })));
    const packet = (await scanAll(stack.tables.forms)).map((i) => unmarshall(i)).find((i) => i.sk === 'PACKET' && i.packetId === packetId);
    const winner = String(packet?.patientId);
    console.log(`concurrency route, two patients: winner ${winner}, statuses ${histogram(answers.map((a) => a.status))}`);
    const issues: string[] = [];
    answers.forEach((a, i) => {
      const want = targets[i] === winner ? 200 : 409;
      if (a.status !== want) issues.push(`routing to ${targets[i]} answered ${a.status}, want ${want}`);
    });
    const routed = ((packet?.history as Array<{ action: string }>) ?? []).filter((h) => h.action === 'routed_manually').length;
    if (routed !== 1) issues.push(`${routed} routed_manually entries`);
    tally.record(issues, () => 'route same packet, two patients');
    expect(issues.slice(0, 5)).toEqual([]);
  });
});

describe('concurrency: rate limits', () => {
  const BURST = 200;

  it(`a key with limit 20: ${BURST} parallel requests get exactly 20 non-429 answers`, async () => {
    const secret = unique('rel-limit20');
    await createKey(stack, { secret, partnerId: 'demo-ehr', scopes: [Scopes.exportHl7], rateLimit: 20, rateWindowSeconds: 3600 });
    await awayFromBoundary(3600, 15);
    const answers = await Promise.all(
      Array.from({ length: BURST }, () => call(stack, 'GET', '/exportHl7PatientAdt?patientId=demo-patient-1', { headers: { 'x-api-key': secret } })),
    );
    const allowed = answers.filter((a) => a.status !== 429);
    const limited = answers.filter((a) => a.status === 429);
    console.log(`concurrency rate limit 20: statuses ${histogram(answers.map((a) => a.status))}`);
    const issues: string[] = [];
    if (allowed.length > 20) issues.push(`${allowed.length} requests got through a limit of 20`);
    if (allowed.length !== 20) issues.push(`${allowed.length} non-429 answers (want exactly 20 in one window)`);
    if (allowed.some((a) => a.status !== 200)) issues.push(`allowed statuses ${histogram(allowed.map((a) => a.status))}`);
    const remaining = allowed.map((a) => Number(a.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    if (remaining.join() !== Array.from({ length: 20 }, (_, i) => i).join()) issues.push(`remaining values ${remaining.join(',')}`);
    if (
      limited.some(
        (a) =>
          !/^\d+$/.test(a.headers.get('retry-after') ?? '') ||
          a.headers.get('x-ratelimit-remaining') !== '0' ||
          a.headers.get('content-type') !== 'application/problem+json',
      )
    )
      issues.push('a 429 lacks Retry-After / remaining 0 / problem+json');
    tally.record(issues, () => 'key limit 20');
    expect(issues).toEqual([]);
  });

  it(`the anonymous limit (20): ${BURST} parallel requests without a key get at most 20 401s, the rest 429`, async () => {
    const previous = process.env.ANON_RATE_LIMIT;
    const previousWindow = process.env.ANON_RATE_WINDOW_SECONDS;
    process.env.ANON_RATE_LIMIT = '20';
    process.env.ANON_RATE_WINDOW_SECONDS = '3600';
    try {
      await awayFromBoundary(3600, 15);
      const sourceIp = '198.51.100.7';
      const answers = await Promise.all(
        Array.from({ length: BURST }, () => send({ method: 'GET', url: '/exportHl7PatientAdt?patientId=demo-patient-1', headers: {}, sourceIp })),
      );
      console.log(`concurrency anonymous limit 20: statuses ${histogram(answers.map((a) => a.status))}`);
      const issues: string[] = [];
      const unauth = answers.filter((a) => a.status === 401).length;
      if (unauth !== 20) issues.push(`${unauth} 401s (want exactly 20)`);
      if (answers.some((a) => a.status !== 401 && a.status !== 429)) issues.push(`statuses ${histogram(answers.map((a) => a.status))}`);
      tally.record(issues, () => 'anonymous limit 20');
      expect(issues).toEqual([]);
    } finally {
      process.env.ANON_RATE_LIMIT = previous;
      process.env.ANON_RATE_WINDOW_SECONDS = previousWindow;
    }
  });

  it(`demo-limited-key (5 per 60 s): ${BURST} parallel requests get at most 5 non-429 answers`, async () => {
    await awayFromBoundary(60, 5);
    const answers = await Promise.all(
      Array.from({ length: BURST }, () =>
        call(stack, 'GET', '/exportHl7PatientAdt?patientId=demo-patient-1', { headers: { 'x-api-key': 'demo-limited-key' } }),
      ),
    );
    const allowed = answers.filter((a) => a.status !== 429).length;
    console.log(`concurrency demo-limited-key: statuses ${histogram(answers.map((a) => a.status))}`);
    const issues = allowed <= 5 ? [] : [`${allowed} requests got through a limit of 5`];
    tally.record(issues, () => 'demo-limited-key');
    expect(issues).toEqual([]);
  });

  it('prints the suite summary', () => {
    tally.print();
    expect(tally.failed).toBe(0);
  });
});
