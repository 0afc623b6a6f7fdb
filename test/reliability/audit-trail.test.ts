/**
 * Reliability suite 6: the audit trail.
 *
 * Every export served (5 exports x 2 patients), result stored (new, replayed, resubmitted), packet
 * received (queued, routed, duplicate), packet routed, inbox read and inbox list has exactly one
 * audit record, found by the request's x-request-id, with the caller's partnerId and keyId (never
 * the secret), the action, outcome success, the HTTP status, the time of the request, the resource
 * ids of what was touched, and no PHI.
 * Refusals and failures: an unknown export id leaves outcome not_found, a routing to another patient
 * conflict, a bad inbox cursor invalid, a dependency fault failed (status 503, what the caller got);
 * such records keep none of the ids the caller sent (unverified text: no patientId, no resourceIds,
 * subject UNRESOLVED#<day>#<shard>). Repeating a routing to the same patient is a retry: success. A refused
 * key (401/403) leaves nothing (the endpoint never ran). A success is only answered once its record is written: when the audit append
 * fails the caller gets 503 and no data. A patient's trail reads back in order (the query behind
 * `npm run audit -- --patient ID`).
 */
import { unmarshall } from '../../lib/aws/attribute-values';
import { AuditTrail, subjectKey } from '../../lib/audit/audit-trail';
import { AuditTrailReader } from '../../lib/audit/audit-trail-reader';
import { dynamoDbClient } from '../../lib/aws/clients';
import { hashApiKey, keyIdFromHash } from '../../lib/keys/api-key';
import type { LocalStack } from '../../lib/local/stack';
import { DEMO_KEYS } from '../../lib/local/demo-keys';
import {
  ALL_PHI_STRINGS,
  FaultInjector,
  FORM_PHI,
  formBody,
  itemText,
  jsonPost,
  LAB_PHI,
  labBody,
  phiIn,
  problemShapeIssues,
  quietLogs,
  scanAll,
  send,
  startReliabilityStack,
  Tally,
  unique,
  type Res,
} from './support';

/** The audit trail's records: the audit table without the accounting of disclosures beside it (its own partitions, docs/disclosures.md). */
async function auditTrail(): Promise<Array<Record<string, unknown>>> {
  return (await scanAll(stack.tables.audit)).map((i) => unmarshall(i)).filter((r) => !String(r.pk).startsWith('DISCLOSURE#'));
}

let stack: LocalStack;
let logs: ReturnType<typeof quietLogs>;
const tally = new Tally('audit-trail');

beforeAll(async () => {
  logs = quietLogs();
  stack = await startReliabilityStack();
});

afterAll(async () => {
  logs?.restore();
  await stack?.close();
});

const SECRETS = DEMO_KEYS.map((k) => k.secret);
const partnerOf = (secret: string) => DEMO_KEYS.find((k) => k.secret === secret)!.partnerId;
const keyIdOf = (secret: string) => keyIdFromHash(hashApiKey(secret));

interface Expected {
  what: string;
  requestId: string;
  secret: string;
  action: string;
  outcome: string;
  status: number;
  patientId?: string;
  resourceIds?: Record<string, string>;
  startedAt: string;
}

const expectations: Expected[] = [];
const silent: Array<{ what: string; requestId: string }> = [];

async function audited(
  what: string,
  secret: string,
  req: { method: string; url: string; body?: unknown },
  expect: Omit<Expected, 'what' | 'requestId' | 'secret' | 'startedAt' | 'status'> & { status?: number },
): Promise<Res> {
  const requestId = unique('audit');
  const startedAt = new Date().toISOString();
  const res = await send({
    method: req.method,
    url: req.url,
    headers: { 'x-api-key': secret, 'x-request-id': requestId, ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
  });
  expectations.push({ what, requestId, secret, startedAt, ...expect, status: expect.status ?? res.status });
  return res;
}

describe('audit trail: one record per PHI access or change', () => {
  it('exports, results, packets, routing and inbox reads all leave their record', async () => {
    const exportKey = 'demo-export-key';
    for (const n of [1, 2]) {
      const p = `demo-patient-${n}`;
      const cases: Array<{ url: string; action: string; resourceIds?: Record<string, string> }> = [
        { url: `/exportHl7PatientAdt?patientId=${p}`, action: 'export.patient_adt', resourceIds: undefined },
        { url: `/exportHl7PatientSummary?patientId=${p}&limit=7`, action: 'export.patient_summary', resourceIds: { limit: '7' } },
        { url: `/exportHl7PatientSummary?patientId=${p}`, action: 'export.patient_summary', resourceIds: { limit: '20' } },
        {
          url: `/exportHl7Encounter?patientId=${p}&encounterId=demo-encounter-${n}`,
          action: 'export.encounter',
          resourceIds: { encounterId: `demo-encounter-${n}` },
        },
        { url: `/exportHl7Note?patientId=${p}&noteId=demo-note-${n}`, action: 'export.note', resourceIds: { noteId: `demo-note-${n}` } },
        {
          url: `/exportHl7Assessment?patientId=${p}&assessmentId=demo-assessment-${n}`,
          action: 'export.assessment',
          resourceIds: { assessmentId: `demo-assessment-${n}` },
        },
      ];
      for (const c of cases) {
        const res = await audited(
          `${c.action} ${p}`,
          exportKey,
          { method: 'GET', url: c.url },
          { action: c.action, outcome: 'success', patientId: p, resourceIds: c.resourceIds },
        );
        expect(res.status).toBe(200);
      }
    }
    // an export of an unknown record, and another patient's record: not_found
    for (const url of ['/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-2', '/exportHl7PatientAdt?patientId=no-such-patient']) {
      const res = await audited(
        `export not found ${url}`,
        exportKey,
        { method: 'GET', url },
        { action: url.includes('Note') ? 'export.note' : 'export.patient_adt', outcome: 'not_found' },
      );
      expect(res.status).toBe(404);
    }

    // lab results: stored, replayed (same x-request-id), resubmitted byte-identical (new x-request-id)
    const resultsKey = 'demo-results-key';
    const lab = labBody({ patientID: LAB_PHI.patientID, results: { testName: LAB_PHI.testName, result: LAB_PHI.result } });
    const first = await audited(
      'results.store',
      resultsKey,
      { method: 'POST', url: '/receiveTestData', body: lab },
      { action: 'results.store', outcome: 'success' },
    );
    expect(first.status).toBe(200);
    const { resultId, version } = first.json<{ resultId: string; version: string }>();
    expectations[expectations.length - 1]!.resourceIds = { resultId, version };
    const replayId = expectations[expectations.length - 1]!.requestId;
    // (the replay's start time is taken before it is sent: its record's time is before the answer)
    const replayStartedAt = new Date().toISOString();
    const replay = await send(jsonPost('/receiveTestData', resultsKey, lab, { 'x-request-id': replayId }));
    expect(replay.status).toBe(200);
    // the replay serves the stored answer again: it is audited too, under the same request id
    expectations.push({ ...expectations[expectations.length - 1]!, what: 'results.store replay', startedAt: replayStartedAt });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const again = await audited(
      'results.store_duplicate',
      resultsKey,
      { method: 'POST', url: '/receiveTestData', body: lab },
      { action: 'results.store_duplicate', outcome: 'success', resourceIds: { resultId, version } },
    );
    expect(again.status).toBe(200);

    // packets: queued, routed at intake, duplicate
    const formsKey = 'demo-forms-key';
    const queuedBody = formBody({}, { firstName: FORM_PHI.firstName, lastName: FORM_PHI.lastName, dob: FORM_PHI.dob, email: FORM_PHI.email });
    const queued = await audited(
      'forms.receive queued',
      formsKey,
      { method: 'POST', url: '/receiveFormIntakeScope', body: queuedBody },
      { action: 'forms.receive', outcome: 'success' },
    );
    expect(queued.status).toBe(202);
    const queuedId = queued.json<{ packetId: string }>().packetId;
    expectations[expectations.length - 1]!.resourceIds = { packetId: queuedId };
    const dup = await audited(
      'forms.receive_duplicate',
      formsKey,
      { method: 'POST', url: '/receiveFormIntakeScope', body: queuedBody },
      { action: 'forms.receive_duplicate', outcome: 'success', resourceIds: { packetId: queuedId } },
    );
    expect(dup.status).toBe(202);
    const routed = await audited(
      'forms.receive routed',
      formsKey,
      {
        method: 'POST',
        url: '/receiveFormIntakeScope',
        body: formBody({ patientId: 'demo-patient-2' }, { firstName: 'Zoë', lastName: 'Ødegård', dob: '1992-11-03' }),
      },
      { action: 'forms.receive', outcome: 'success', patientId: 'demo-patient-2' },
    );
    expect(routed.status).toBe(202);
    expectations[expectations.length - 1]!.resourceIds = { packetId: routed.json<{ packetId: string }>().packetId };

    // the inbox: list, read, route, route again (a retry: success), route elsewhere (conflict), bad cursor (invalid)
    const inboxKey = 'demo-inbox-key';
    expect(
      (
        await audited(
          'inbox.list',
          inboxKey,
          { method: 'GET', url: '/interopInbox?state=pending_match' },
          { action: 'inbox.list', outcome: 'success', resourceIds: { state: 'pending_match' } },
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await audited(
          'inbox.list default',
          inboxKey,
          { method: 'GET', url: '/interopInbox' },
          { action: 'inbox.list', outcome: 'success', resourceIds: { state: 'pending_review' } },
        )
      ).status,
    ).toBe(200);
    expect(
      (await audited('inbox.list bad cursor', inboxKey, { method: 'GET', url: '/interopInbox?cursor=abc' }, { action: 'inbox.list', outcome: 'invalid' }))
        .status,
    ).toBe(400);
    expect(
      (
        await audited(
          'inbox.read',
          inboxKey,
          { method: 'GET', url: `/interopInbox/${queuedId}` },
          { action: 'inbox.read', outcome: 'success', resourceIds: { packetId: queuedId } },
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await audited(
          'inbox.route',
          inboxKey,
          { method: 'POST', url: `/interopInbox/${queuedId}/route`, body: { patientId: 'demo-patient-5' } },
          { action: 'inbox.route', outcome: 'success', patientId: 'demo-patient-5', resourceIds: { packetId: queuedId } },
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await audited(
          'inbox.route again',
          inboxKey,
          { method: 'POST', url: `/interopInbox/${queuedId}/route`, body: { patientId: 'demo-patient-5' } },
          { action: 'inbox.route', outcome: 'success', patientId: 'demo-patient-5', resourceIds: { packetId: queuedId } },
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await audited(
          'inbox.route elsewhere',
          inboxKey,
          { method: 'POST', url: `/interopInbox/${queuedId}/route`, body: { patientId: 'demo-patient-4' } },
          { action: 'inbox.route', outcome: 'conflict' },
        )
      ).status,
    ).toBe(409);
    expect(
      (
        await audited(
          'inbox.read after routing',
          inboxKey,
          { method: 'GET', url: `/interopInbox/${queuedId}` },
          { action: 'inbox.read', outcome: 'success', resourceIds: { packetId: queuedId } },
        )
      ).status,
    ).toBe(200);

    // refused: nothing is recorded (the endpoint never ran)
    for (const [secret, url] of [
      ['demo-results-key', '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1'],
      ['demo-blocked-key', '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1'],
      ['demo-revoked-key', '/interopInbox'],
      ['demo-all-key', `/interopInbox/${queuedId}`],
    ] as const) {
      const requestId = unique('audit-refused');
      const res = await send({ method: 'GET', url, headers: { 'x-api-key': secret, 'x-request-id': requestId } });
      expect([401, 403]).toContain(res.status);
      silent.push({ what: `refused ${secret} ${url}`, requestId });
    }
  });

  it('each of them has exactly one record with partner, key, request id, outcome, status, time and resource ids', async () => {
    const records = await auditTrail();
    const byRequest = new Map<string, Array<Record<string, unknown>>>();
    for (const r of records) byRequest.set(String(r.requestId), [...(byRequest.get(String(r.requestId)) ?? []), r]);
    const all: string[] = [];
    for (const e of expectations) {
      const found = byRequest.get(e.requestId) ?? [];
      const issues: string[] = [];
      const want = expectations.filter((x) => x.requestId === e.requestId).length;
      if (found.length !== want) issues.push(`${found.length} records (want ${want})`);
      const r = found.find((x) => String(x.at) >= e.startedAt.slice(0, 19)) ?? found[0];
      if (r) {
        if (r.action !== e.action) issues.push(`action ${String(r.action)}`);
        if (r.outcome !== e.outcome) issues.push(`outcome ${String(r.outcome)}`);
        if (r.status !== e.status) issues.push(`status ${String(r.status)} (response ${e.status})`);
        if (r.partnerId !== partnerOf(e.secret)) issues.push(`partnerId ${String(r.partnerId)}`);
        if (r.keyId !== keyIdOf(e.secret)) issues.push(`keyId ${String(r.keyId)}`);
        if (r.patientId !== e.patientId) issues.push(`patientId ${String(r.patientId)}`);
        if (JSON.stringify(r.resourceIds ?? null) !== JSON.stringify(e.resourceIds ?? null)) issues.push(`resourceIds ${JSON.stringify(r.resourceIds)}`);
        if (typeof r.at !== 'string' || r.at < e.startedAt.slice(0, 19) || r.at > new Date().toISOString()) issues.push(`at ${String(r.at)}`);
        const text = itemText(r);
        const phi = phiIn(text, ALL_PHI_STRINGS);
        if (phi.length) issues.push(`PHI: ${phi.join(',')}`);
        if (SECRETS.some((s) => text.includes(s))) issues.push('an API key secret');
        const firstId = Object.entries(e.resourceIds ?? {})[0];
        const expectedPk = e.patientId
          ? `PATIENT#${e.patientId}`
          : firstId
            ? `RESOURCE#${firstId[0]}#${firstId[1]}`
            : subjectKey({ at: String(r.at), requestId: String(r.requestId) });
        if (r.pk !== expectedPk) issues.push(`pk ${String(r.pk)}`);
      }
      tally.record(issues, () => e.what);
      all.push(...issues.map((i) => `${e.what}: ${i}`));
    }
    for (const s of silent) {
      const n = (byRequest.get(s.requestId) ?? []).length;
      tally.record(n === 0 ? [] : [`${n} records`], () => s.what);
      if (n) all.push(`${s.what}: ${n} records for a refused request`);
    }
    expect(all).toEqual([]);
    expect(expectations.length).toBeGreaterThanOrEqual(25);
  });

  it('a success is answered only once its record is written: a failing audit append gives 503 and no data', async () => {
    const faults = new FaultInjector();
    faults.filter = (service, command) => service === 'dynamodb' && command === 'PutItemCommand';
    faults.install();
    const all: string[] = [];
    for (const [secret, url] of [
      ['demo-export-key', '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1'],
      ['demo-export-key', '/exportHl7PatientSummary?patientId=demo-patient-1'],
      ['demo-inbox-key', '/interopInbox?state=pending_match'],
    ] as const) {
      const issues: string[] = [];
      faults.arm(1, 'throttling'); // the only PutItem of a read is the audit append
      const res = await send({ method: 'GET', url, headers: { 'x-api-key': secret } });
      const failedCall = faults.calls.find((c) => c.failed);
      if (!failedCall || !failedCall.input.includes(stack.tables.audit)) issues.push(`${url}: the failed PutItem was not the audit append`);
      if (res.status !== 503 || !res.headers['retry-after']) issues.push(`${url}: ${res.status} without Retry-After`);
      if (res.body.startsWith('MSH') || phiIn(res.body).length) issues.push(`${url}: data served without its audit record`);
      issues.push(...problemShapeIssues(res).map((i) => `${url}: ${i}`));
      tally.record(issues, () => `audit append fails ${url}`);
      all.push(...issues);
    }
    faults.restore();
    expect(all).toEqual([]);
  });

  /*
   * Was a BUG, fixed in ebaed43 (lib/http/middleware/audit-recording.ts, statusOfError, lines 13-17): the audit record of a
   * request that failed on a dependency (throttling, timeout, 5xx: DependencyUnavailableError,
   * KeyServiceUnavailableError, raw SDK errors) stores status 500, but the caller was answered 503
   * (http-responses.ts maps retryable errors to 503 + Retry-After). auditRecording's onError runs
   * before httpResponses' onError, and statusOfError does not apply the same mapping
   * (isRetryableDependencyError -> 503). The audit trail then misreported what the partner saw.
   * Regression test.
   */
  it('a request failing on a dependency is audited with the status the caller got (503) (was a BUG: audit statusOfError)', async () => {
    const faults = new FaultInjector();
    faults.filter = (service, command) => service === 'dynamodb' && command === 'BatchGetItemCommand';
    faults.install();
    faults.arm(1, 'internal');
    const requestId = unique('audit-failed');
    const res = await send({
      method: 'GET',
      url: '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1',
      headers: { 'x-api-key': 'demo-export-key', 'x-request-id': requestId },
    });
    faults.restore();
    expect(res.status).toBe(503);
    const records = (await auditTrail()).filter((r) => r.requestId === requestId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ action: 'export.note', outcome: 'failed', partnerId: 'demo-ehr' });
    expect(records[0]!.status).toBe(res.status);
    expect(records[0]!.patientId).toBeUndefined();
    expect(records[0]!.resourceIds).toBeUndefined();
    tally.record([], () => 'dependency failure audited 503');
  });

  it("a patient's trail reads back oldest first (npm run audit -- --patient)", async () => {
    const trail = await new AuditTrailReader(dynamoDbClient(), stack.tables.audit).forPatient('demo-patient-1');
    const mine = expectations.filter((e) => e.patientId === 'demo-patient-1').map((e) => e.requestId);
    const seen = trail.map((r) => r.requestId).filter((id) => mine.includes(id));
    const issues: string[] = [];
    if (seen.length !== mine.length) issues.push(`${seen.length} of ${mine.length} records`);
    const times = trail.map((r) => r.at);
    if (times.join() !== [...times].sort().join()) issues.push('not oldest first');
    tally.record(issues, () => 'forPatient');
    expect(issues).toEqual([]);
  });

  /*
   * Was a BUG: an ORU^R01 for an unknown MRN with 57+ OBR groups stored every result, answered 500 and
   * left no audit record: the record's partition key named every resultId (RESOURCE#resultIds#a,b,...)
   * and grew past DynamoDB's 2,048-byte key limit. Keys are now bounded (the first id; ids go in
   * attributes, a list capped with a count). Regression tests.
   */
  it('an ORU^R01 with 50 OBR groups for an unknown MRN answers 200 AA and leaves its audit record', async () => {
    const requestId = unique('audit-oru50');
    const controlId = unique('O50')
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(-20);
    const segments = [
      `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${controlId}|P|2.5.1`,
      `PID|1||${controlId}^^^DEMO-HOSP^MR||Unknown^Una`,
    ];
    for (let g = 1; g <= 50; g += 1) {
      segments.push(`OBR|${g}|ORD${g}|${controlId}-${g}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`);
      segments.push(`OBX|1|NM|2345-7^Glucose^LN||${g}|mg/dL|70-99|N|||F`);
    }
    const res = await send({
      method: 'POST',
      url: '/receiveHl7',
      headers: { 'x-api-key': 'demo-hl7-key', 'x-request-id': requestId, 'content-type': 'application/hl7-v2' },
      body: segments.join('\r') + '\r',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/\rMSA\|AA\|/);
    const records = (await auditTrail()).filter((r) => r.requestId === requestId);
    expect(records).toHaveLength(1);
    const record = records[0]!;
    expect(record).toMatchObject({ action: 'hl7.oru.results_store', outcome: 'success', status: 200, partnerId: 'demo-lab' });
    const ids = String((record.resourceIds as Record<string, string>).resultIds).split(',');
    expect(ids).toHaveLength(50);
    expect((record.resourceIds as Record<string, string>).count).toBe('50');
    expect(record.pk).toBe(`RESOURCE#resultIds#${ids[0]}`);
    tally.record([], () => 'ORU with 50 OBR groups audited');
  });

  it('no key grows with the content: 1,000 result ids keep a bounded key and the first ids with a count', async () => {
    const trail = new AuditTrail(dynamoDbClient(), stack.tables.audit);
    const requestId = unique('audit-bounded');
    const resultIds = Array.from({ length: 1000 }, (_, i) => `r${String(i).padStart(4, '0')}${'x'.repeat(60)}`);
    await trail.append({
      action: 'hl7.oru.results_store',
      resourceIds: { resultIds: resultIds.join(','), count: '1000' },
      at: new Date().toISOString(),
      requestId,
      partnerId: 'demo-lab',
      keyId: 'k',
      outcome: 'success',
      status: 200,
    });
    const record = (await auditTrail()).find((r) => r.requestId === requestId)!;
    expect(Buffer.byteLength(String(record.pk))).toBeLessThan(400);
    expect(record.pk).toBe(`RESOURCE#resultIds#${resultIds[0]}`);
    const kept = String((record.resourceIds as Record<string, string>).resultIds).split(',');
    expect(kept).toEqual(resultIds.slice(0, kept.length));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThanOrEqual(100);
    expect((record.resourceIds as Record<string, string>).resultIdsCount).toBe('1000');
    tally.record([], () => 'audit key bounded');
  });

  it('prints the suite summary', () => {
    tally.print();
    expect(tally.failed).toBe(0);
  });
});
