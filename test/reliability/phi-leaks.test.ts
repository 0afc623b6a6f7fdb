/**
 * Reliability suite 5: PHI never leaks.
 *
 * Representative traffic for all 10 endpoints (successes, validation failures carrying PHI in the
 * failing fields, not-found, conflicts, a dependency fault), plus the background functions (the
 * matcher on the real queue messages, the sweeper, the notification retry job), with every log line
 * captured at LOG_LEVEL=debug through setLogSink. None of the PHI strings of the fixtures (demo
 * chart names, birth dates, MRNs, emails, addresses, note and assessment text; the lab results'
 * patient id, accession, values, report text; the form packets' names, birth date, email, external
 * id, answers, form name) may appear in:
 *   - any log line,
 *   - any error (problem) body, nor in the bodies that are documented to carry ids only (lab and
 *     form intake answers, inbox list),
 *   - any queue message (matching, notifications and webhook deliveries queues and their DLQs, received with the SQS client),
 *   - any webhook request (body and headers, as a loopback sink received them) and the webhooks table (delivery log),
 *   - the audit table,
 *   - the plain (non-ciphertext) attributes of the results, idempotency and forms tables, and S3 keys.
 */
import { ReceiveMessageCommand, SendMessageCommand, SetQueueAttributesCommand, DeleteMessageBatchCommand, type Message } from '@aws-sdk/client-sqs';
import { unmarshall } from '../../lib/aws/attribute-values';
import { randomBytes } from 'node:crypto';
import { sqsClient } from '../../lib/aws/clients';
import { matchingMessageBody } from '../../lib/forms/matching-queue';
import { sqsRecordOf } from '../../lib/local/form-workers';
import type { LocalStack } from '../../lib/local/stack';
import { handler as matchHandler } from '../../functions/matchFormPackets';
import { handler as retryNotifications } from '../../functions/retryResultNotifications';
import { handler as sweep } from '../../functions/sweepPendingPackets';
import { handler as deliverWebhooks } from '../../functions/deliverWebhooks';
import { handler as fanOutWebhookEvents } from '../../functions/fanOutWebhookEvents';
import { startWebhookSink } from '../../lib/local/webhook-sink';
import { webhookSecretEncryptor } from '../../lib/webhooks/delivery-wiring';
import { addSubscription } from '../../lib/webhooks/management';
import { enqueueDelivery } from '../../lib/webhooks/delivery-queue';
import { webhookStore } from '../../lib/webhooks/store-wiring';
import {
  ALL_PHI_STRINGS,
  BULK_KEYS,
  captureLogs,
  ENDPOINT_URLS,
  FaultInjector,
  FORM_PHI,
  formBody,
  inboxPacket,
  itemText,
  jsonPost,
  LAB_PHI,
  labBody,
  listObjectKeys,
  phiIn,
  scanAll,
  send,
  startReliabilityStack,
  Tally,
  unique,
  type LogCapture,
  type Res,
} from './support';

let stack: LocalStack;
let logs: LogCapture;
const tally = new Tally('phi-leaks');
/** every answer whose body must be PHI-free, with what produced it */
const checkedBodies: Array<{ what: string; res: Res }> = [];
const packetIds: string[] = [];
/** what the webhook sink received (bodies and headers) */
const webhookBodies: string[] = [];

beforeAll(async () => {
  logs = captureLogs();
  stack = await startReliabilityStack();
});

afterAll(async () => {
  logs?.restore();
  await stack?.close();
});

async function exchange(what: string, req: Parameters<typeof send>[0], options: { bodyMayCarryPhi?: boolean } = {}): Promise<Res> {
  const res = await send(req);
  if (!options.bodyMayCarryPhi || res.status >= 300) checkedBodies.push({ what, res });
  return res;
}

const labPhiBody = (over: Record<string, unknown> = {}) =>
  labBody({
    patientID: LAB_PHI.patientID,
    accessionNumber: `${LAB_PHI.accessionNumber}-${randomBytes(3).toString('hex')}`,
    recordNo: LAB_PHI.recordNo,
    results: [{ testName: LAB_PHI.testName, result: LAB_PHI.result, units: 'g/dL', referenceRange: LAB_PHI.referenceRange }],
    reports: [{ source: 'text', type: 'narrative', name: LAB_PHI.reportName, data: LAB_PHI.reportText }],
    orderingPhysician: LAB_PHI.extra,
    ...over,
  });

const formPhiBody = (over: Record<string, unknown> = {}, patient: Record<string, unknown> = {}) =>
  formBody(
    { formName: FORM_PHI.formName, answers: { allergies: FORM_PHI.answer, smoker: 'no', notes: [FORM_PHI.answer, 1, true] }, ...over },
    {
      firstName: FORM_PHI.firstName,
      lastName: FORM_PHI.lastName,
      dob: FORM_PHI.dob,
      email: FORM_PHI.email,
      externalPatientId: FORM_PHI.externalPatientId,
      ...patient,
    },
  );

async function receiveAll(url: string, options: { remove: boolean }): Promise<Message[]> {
  const all: Message[] = [];
  for (let i = 0; i < 100; i++) {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) break;
    all.push(...messages);
    if (options.remove)
      await sqsClient().send(
        new DeleteMessageBatchCommand({ QueueUrl: url, Entries: messages.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle! })) }),
      );
  }
  return all;
}

describe('PHI never leaks', () => {
  it('drives representative traffic through every endpoint and the background functions', async () => {
    const exportKey = { 'x-api-key': BULK_KEYS.export.secret };
    // ---- lab results: stored (inline and S3 report), replayed, conflicting, invalid with PHI in the failing fields, forbidden
    const rid = unique('phi-lab');
    const stored = labPhiBody({ patientID: 'demo-patient-1' });
    expect((await exchange('lab store', jsonPost('/receiveTestData', BULK_KEYS.results.secret, stored, { 'x-request-id': rid }))).status).toBe(200);
    expect((await exchange('lab replay', jsonPost('/receiveTestData', BULK_KEYS.results.secret, stored, { 'x-request-id': rid }))).status).toBe(200);
    expect((await exchange('lab conflict', jsonPost('/receiveTestData', BULK_KEYS.results.secret, labPhiBody(), { 'x-request-id': rid }))).status).toBe(409);
    expect((await exchange('lab unmatched patient', jsonPost('/receiveTestData', BULK_KEYS.results.secret, labPhiBody()))).status).toBe(200);
    const bigReport = { source: 'base64', type: 'pdf', name: LAB_PHI.reportName, data: Buffer.from(`${LAB_PHI.reportText} `.repeat(1200)).toString('base64') };
    expect((await exchange('lab S3 report', jsonPost('/receiveTestData', BULK_KEYS.results.secret, labPhiBody({ reports: [bigReport] })))).status).toBe(200);
    const invalidLab = [
      labPhiBody({ ResultedDateUTC: `${LAB_PHI.patientID} 1970-01-01` }),
      labPhiBody({ status: LAB_PHI.result }),
      labPhiBody({ patientID: ` ${LAB_PHI.patientID}` }),
      labPhiBody({ accessionNumber: `${LAB_PHI.accessionNumber}\u0000` }),
      labPhiBody({ results: [{ testName: LAB_PHI.testName, result: { value: LAB_PHI.result } }] }),
      labPhiBody({ reports: [{ source: 'base64', type: 'pdf', name: LAB_PHI.reportName, data: LAB_PHI.reportText }] }),
      labPhiBody({ senderID: LAB_PHI.patientID }),
      { data: { ...labPhiBody().data, results: [] }, [LAB_PHI.extra]: LAB_PHI.reportText },
    ];
    for (const [i, b] of invalidLab.entries())
      expect((await exchange(`lab invalid ${i}`, jsonPost('/receiveTestData', BULK_KEYS.results.secret, b))).status).toBeGreaterThanOrEqual(400);
    expect((await exchange('lab malformed', jsonPost('/receiveTestData', BULK_KEYS.results.secret, JSON.stringify(labPhiBody()).slice(0, -3)))).status).toBe(
      400,
    );

    // ---- form packets: queued, routed, unknown patient, duplicate, invalid with PHI in the failing fields, too large
    for (const [what, body, status] of [
      ['form queued', formPhiBody(), 202],
      ['form routed', formPhiBody({ patientId: 'demo-patient-1' }, { firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12' }), 202],
      ['form contradicting its patientId', formPhiBody({ patientId: 'demo-patient-1' }), 202],
      ['form unknown patient', formPhiBody({ patientId: 'no-such-patient-phi' }), 202],
      ['form matchable', formPhiBody({}, { firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12', email: 'alex.sample@example.com' }), 202],
    ] as const) {
      const res = await exchange(what, jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, body));
      expect(res.status).toBe(status);
      packetIds.push(res.json<{ packetId: string }>().packetId);
      if (what === 'form queued')
        expect((await exchange('form duplicate', jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, body))).status).toBe(202);
    }
    const invalidForms = [
      formPhiBody({}, { dob: '1969-02-30' }),
      formPhiBody({}, { email: `${FORM_PHI.firstName}@@${FORM_PHI.lastName}` }),
      formPhiBody({}, { firstName: ' '.repeat(3), lastName: FORM_PHI.lastName.repeat(30) }),
      formPhiBody({ patientId: FORM_PHI.lastName + ' ' + FORM_PHI.firstName }),
      formPhiBody({ answers: { allergies: { detail: FORM_PHI.answer } } }),
      formPhiBody({ submissionId: `${FORM_PHI.externalPatientId} ${FORM_PHI.email}` }),
      formPhiBody({ answers: { a: FORM_PHI.answer.repeat(20_000), b: FORM_PHI.answer.repeat(5_000) } }),
    ];
    for (const [i, b] of invalidForms.entries())
      expect((await exchange(`form invalid ${i}`, jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, b))).status).toBeGreaterThanOrEqual(400);

    // ---- exports (their 200 bodies carry PHI by design; their errors must not)
    for (const [name, url] of Object.entries(ENDPOINT_URLS)) {
      expect((await exchange(name, { method: 'GET', url, headers: exportKey }, { bodyMayCarryPhi: true })).status).toBe(200);
      expect(
        (
          await exchange(
            `${name} patient 2`,
            { method: 'GET', url: url.replace(/demo-(patient|encounter|note|assessment)-1/g, 'demo-$1-2'), headers: exportKey },
            { bodyMayCarryPhi: true },
          )
        ).status,
      ).toBe(200);
    }
    for (const url of [
      '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-2',
      `/exportHl7PatientAdt?patientId=${encodeURIComponent('Ødegård')}`,
      `/exportHl7PatientSummary?patientId=demo-patient-1&limit=${encodeURIComponent('Sample')}`,
      `/exportHl7Encounter?patientId=${encodeURIComponent('alex.sample@example.com')}&encounterId=demo-encounter-1`,
    ]) {
      expect((await exchange(`export error ${url}`, { method: 'GET', url, headers: exportKey })).status).toBeGreaterThanOrEqual(400);
    }
    expect(
      (await exchange('export not acceptable', { method: 'GET', url: ENDPOINT_URLS.exportHl7Note, headers: { ...exportKey, accept: 'application/json' } }))
        .status,
    ).toBe(406);

    // ---- a dependency fault: the 503 and its log lines
    const faults = new FaultInjector();
    faults.filter = (service, command) => service === 'dynamodb' && command === 'BatchGetItemCommand';
    faults.install();
    faults.arm(1, 'throttling');
    expect((await exchange('export fault', { method: 'GET', url: ENDPOINT_URLS.exportHl7Note, headers: exportKey })).status).toBe(503);
    faults.restore();

    // ---- the matcher on the real queue messages, then the inbox
    const messages = await receiveAll(stack.queues.matching.url, { remove: true });
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages) expect(phiIn(`${m.Body ?? ''} ${JSON.stringify(m.MessageAttributes ?? {})}`)).toEqual([]);
    const region = process.env.AWS_REGION ?? 'us-east-1';
    await matchHandler({ Records: messages.map((m) => sqsRecordOf(m, 'arn:aws:sqs:us-east-1:000000000000:matching', region)) });
    for (const state of ['pending_review', 'pending_match']) {
      expect(
        (
          await exchange(`inbox list ${state}`, {
            method: 'GET',
            url: `/interopInbox?state=${state}&limit=100`,
            headers: { 'x-api-key': BULK_KEYS.inbox.secret },
          })
        ).status,
      ).toBe(200);
    }
    expect(
      (await exchange('inbox bad cursor', { method: 'GET', url: '/interopInbox?cursor=Sample', headers: { 'x-api-key': BULK_KEYS.inbox.secret } })).status,
    ).toBe(400);
    for (const id of packetIds)
      await exchange(
        `inbox read ${id}`,
        { method: 'GET', url: `/interopInbox/${id}`, headers: { 'x-api-key': BULK_KEYS.inbox.secret } },
        { bodyMayCarryPhi: true },
      );
    expect(
      (
        await exchange('inbox read unknown', {
          method: 'GET',
          url: '/interopInbox/fp_00000000000000000000000000000000',
          headers: { 'x-api-key': BULK_KEYS.inbox.secret },
        })
      ).status,
    ).toBe(404);
    expect(
      (await exchange('inbox route', jsonPost(`/interopInbox/${packetIds[2]}/route`, BULK_KEYS.inbox.secret, { patientId: 'demo-patient-3' }))).status,
    ).toBe(200);
    expect(
      (await exchange('inbox route again', jsonPost(`/interopInbox/${packetIds[2]}/route`, BULK_KEYS.inbox.secret, { patientId: 'demo-patient-3' }))).status,
    ).toBe(200);
    expect(
      (await exchange('inbox route elsewhere', jsonPost(`/interopInbox/${packetIds[2]}/route`, BULK_KEYS.inbox.secret, { patientId: 'demo-patient-4' })))
        .status,
    ).toBe(409);
    expect(
      (
        await exchange(
          'inbox route invalid',
          jsonPost(`/interopInbox/${packetIds[0]}/route`, BULK_KEYS.inbox.secret, { patientId: FORM_PHI.email, note: FORM_PHI.answer }),
        )
      ).status,
    ).toBe(400);

    // ---- the other background functions
    await sweep({ thresholdSeconds: 0 });
    await retryNotifications({}, { getRemainingTimeInMillis: () => 60_000 });
    // a summary now reads the stored lab result (decrypted) too
    expect(
      (
        await exchange(
          'summary with lab',
          { method: 'GET', url: '/exportHl7PatientSummary?patientId=demo-patient-1&limit=50', headers: exportKey },
          { bodyMayCarryPhi: true },
        )
      ).status,
    ).toBe(200);

    // ---- webhooks: a subscriber on loopback gets every stored result's event through the real fan-out and
    // delivery handlers; the result read back through GET /exportHl7LabResult (that body is PHI by design)
    const services = {
      store: webhookStore(),
      partnerExists: async () => true,
      // demo-ehr holds export keys: its subscription hears of every partner's results (issue 26)
      partnerHoldsExportScope: async () => true,
      encryptor: webhookSecretEncryptor(),
      enqueue: enqueueDelivery,
      stage: 'local',
      now: () => new Date(),
    };
    const placeholder = await startWebhookSink({ port: 0, secret: 'whsec_' + Buffer.alloc(32).toString('base64') });
    await placeholder.close();
    const { subscription: live, secret } = await addSubscription({ partnerId: 'demo-ehr', url: placeholder.url, events: 'lab-result.saved' }, services);
    const sink = await startWebhookSink({ port: Number(new URL(placeholder.url).port), secret });
    try {
      const notifications = await sqsClient().send(
        new ReceiveMessageCommand({
          QueueUrl: stack.queues.notifications.url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      expect(notifications.Messages?.length).toBeGreaterThan(0);
      await fanOutWebhookEvents({
        Records: (notifications.Messages ?? []).map((m) => sqsRecordOf(m, 'arn:aws:sqs:us-east-1:000000000000:notifications', region)),
      });
      const deliveries = await receiveAll(stack.queues.webhookDeliveries.url, { remove: true });
      expect(deliveries.length).toBeGreaterThan(0);
      await deliverWebhooks({ Records: deliveries.map((m) => sqsRecordOf(m, 'arn:aws:sqs:us-east-1:000000000000:webhook-deliveries', region)) });
      expect(sink.requests.length).toBe(deliveries.length);
      expect(sink.requests.every((r) => r.verified)).toBe(true);
      webhookBodies.push(...sink.requests.map((r) => `${r.body} ${JSON.stringify(r.headers)}`));
      const resultId = JSON.parse(sink.requests[0]!.body).data.resultId as string;
      expect(
        (await exchange('lab result export', { method: 'GET', url: `/exportHl7LabResult?resultId=${resultId}`, headers: exportKey }, { bodyMayCarryPhi: true }))
          .status,
      ).toBe(200);
      expect(
        (
          await exchange('lab result export unknown', {
            method: 'GET',
            url: `/exportHl7LabResult?resultId=${encodeURIComponent(LAB_PHI.patientID)}`,
            headers: exportKey,
          })
        ).status,
      ).toBe(404);
    } finally {
      await webhookStore().removeSubscription(live.subscriptionId);
      await sink.close();
    }
    expect(logs.lines.length).toBeGreaterThan(50);
  });

  it('no webhook body or header, and no delivery log item, carries PHI', async () => {
    const items = await scanAll(stack.tables.webhooks);
    expect(webhookBodies.length).toBeGreaterThan(0);
    expect(items.length).toBeGreaterThan(0);
    const leaks = [...webhookBodies, ...items.map((i) => JSON.stringify(unmarshall(i)))].flatMap((text) => phiIn(text));
    tally.record(leaks, () => `${webhookBodies.length} webhook requests, ${items.length} webhook table items`);
    console.log(`phi-leaks: ${webhookBodies.length} webhook requests and ${items.length} webhook table items checked`);
    expect(leaks).toEqual([]);
  });

  it('no log line carries PHI', () => {
    const leaks = logs.lines.map((line) => ({ line, hits: phiIn(line) })).filter((l) => l.hits.length > 0);
    tally.record(
      leaks.map((l) => `${l.hits.join(',')} in ${l.line.slice(0, 200)}`),
      () => `${logs.lines.length} log lines`,
    );
    console.log(`phi-leaks: ${logs.lines.length} log lines checked against ${ALL_PHI_STRINGS.length} PHI strings`);
    expect(leaks).toEqual([]);
  });

  it('no error body (nor an ids-only success body) carries PHI', () => {
    const leaks: string[] = [];
    for (const { what, res } of checkedBodies) {
      const hits = phiIn(res.body);
      tally.record(
        hits.map((h) => `${h} in ${res.status}`),
        () => what,
      );
      if (hits.length) leaks.push(`${what} (${res.status}): ${hits.join(', ')} in ${res.body.slice(0, 300)}`);
    }
    console.log(`phi-leaks: ${checkedBodies.length} answer bodies checked`);
    expect(leaks).toEqual([]);
  });

  it('no queue message carries PHI (matching, notifications, both DLQs)', async () => {
    // push one message through to the matching DLQ: receive it past maxReceiveCount without deleting
    await sqsClient().send(new SetQueueAttributesCommand({ QueueUrl: stack.queues.matching.url, Attributes: { VisibilityTimeout: '0' } }));
    await sqsClient().send(new SendMessageCommand({ QueueUrl: stack.queues.matching.url, MessageBody: matchingMessageBody(packetIds[0]!) }));
    for (let i = 0; i < 7; i++)
      await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: stack.queues.matching.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const all: Array<{ queue: string; m: Message }> = [];
    for (const [id, q] of Object.entries(stack.queues)) {
      for (const m of await receiveAll(q.url, { remove: false })) all.push({ queue: id, m });
      for (const m of await receiveAll(q.dlqUrl, { remove: false })) all.push({ queue: `${id}-dlq`, m });
    }
    const byQueue = all.reduce<Record<string, number>>((acc, { queue }) => ({ ...acc, [queue]: (acc[queue] ?? 0) + 1 }), {});
    console.log(`phi-leaks: queue messages checked ${JSON.stringify(byQueue)}`);
    expect(all.filter((a) => a.queue === 'notifications').length).toBeGreaterThan(0);
    const leaks: string[] = [];
    for (const { queue, m } of all) {
      const hits = phiIn(`${m.Body ?? ''} ${JSON.stringify(m.MessageAttributes ?? {})}`);
      tally.record(hits, () => `${queue} message`);
      if (hits.length) leaks.push(`${queue}: ${hits.join(', ')}`);
    }
    expect(leaks).toEqual([]);
  });

  it('the audit table carries no PHI', async () => {
    const records = await scanAll(stack.tables.audit);
    expect(records.length).toBeGreaterThan(10);
    const leaks = records.map((r) => ({ r, hits: phiIn(itemText(unmarshall(r))) })).filter((x) => x.hits.length);
    for (const r of records) tally.record(phiIn(itemText(unmarshall(r))), () => 'audit record');
    console.log(`phi-leaks: ${records.length} audit records checked`);
    expect(leaks.map((l) => `${l.hits.join(',')} in ${itemText(unmarshall(l.r)).slice(0, 200)}`)).toEqual([]);
  });

  it('plain storage carries no PHI (results, idempotency and forms tables outside the ciphertext; S3 keys)', async () => {
    const ciphertext = new Set(['envelope', 'summary', 'content']);
    const leaks: string[] = [];
    for (const table of [stack.tables.results, stack.tables.idempotency, stack.tables.forms]) {
      for (const item of await scanAll(table)) {
        const plain = Object.fromEntries(Object.entries(unmarshall(item)).filter(([k]) => !ciphertext.has(k)));
        const hits = phiIn(itemText(plain));
        tally.record(hits, () => `${table} item`);
        if (hits.length) leaks.push(`${table}: ${hits.join(', ')} in ${itemText(plain).slice(0, 200)}`);
      }
    }
    for (const key of await listObjectKeys(stack)) {
      const hits = phiIn(key);
      tally.record(hits, () => `S3 key ${key}`);
      if (hits.length) leaks.push(`S3 key ${key}`);
    }
    expect(leaks).toEqual([]);
  });
});

/*
 * A careless caller puts PHI where an identifier or a property name belongs (an MRN as patientId, a
 * name in the packet id path, a patient's name as a JSON property name). The service cannot know
 * it is PHI, but two places then store or echo it verbatim:
 *
 * Both were addressed in ebaed43: finding 2 is fixed; finding 1 is fixed for forbidden property names
 * but not for the keys of the form answers map (see the BUG below).
 *
 * FINDING / BUG 1 (lib/schemas/field-errors.ts fieldErrors, line 17 `instancePath` and line 22 the
 * `additionalProperties` branch): problem bodies name failing fields by JSON pointer built from the caller's own
 * property names, e.g. POST /interopInbox/{id}/route {"patientId":"x","Quillon Vastergaard":1} answers
 * errors[0].pointer "/Quillon Vastergaard"; a form answer keyed by a name with an invalid value
 * answers "/payload/answers/Quillon Vastergaard". The module promises "messages never echo the
 * submitted value (it may be PHI)"; property names are submitted values too. Suggest: for
 * additionalProperties report the parent pointer (or the property's index), and for answers the key's
 * position, not its text.
 *
 * FINDING / BUG 2 (functions/exportHl7*.ts, getInboxPacket.ts line 16, routeInboxPacket.ts line 21:
 * request.audit() is called with the caller's unverified ids before the lookup): a not-found export, inbox read or inbox route appends
 * an audit record whose pk / patientId / resourceIds are the raw request values, e.g.
 * GET /exportHl7PatientAdt?patientId=DEMO-000001 (an MRN) stores pk PATIENT#DEMO-000001, patientId
 * DEMO-000001; GET /interopInbox/Vastergaard stores resourceIds.packetId "Vastergaard". audit-trail.ts
 * promises "No PHI: ids only (patient ids are the service's internal opaque identifiers, never MRNs or
 * names)". Suggest: for outcomes other than success, record a keyed hash of unverified ids (or only
 * ids that exist).
 *
 * Fixes: pointers stop at the parent object / the map; a refused request's audit record keeps no ids.
 */
describe('PHI misplaced into identifiers by a caller', () => {
  it('problem bodies do not echo a caller-supplied property name the schema forbids (was FINDING 1: validation pointers)', async () => {
    const packetId = packetIds[0] ?? (await inboxPacket());
    const res = await send(
      jsonPost(`/interopInbox/${packetId}/route`, BULK_KEYS.inbox.secret, { patientId: 'demo-patient-1', [`${FORM_PHI.firstName} ${FORM_PHI.lastName}`]: 1 }),
    );
    expect(res.status).toBe(400);
    expect(phiIn(res.body)).toEqual([]);
    tally.record([], () => 'additional property name not echoed');
  });

  /*
   * BUG, the fix in ebaed43 is incomplete (lib/schemas/field-errors.ts, callerKeyDepth line 43, used at line
   * 19): it recognises a value inside a caller-keyed map by `/additionalProperties/` in the error's
   * schemaPath, but the form answers map is `additionalProperties: { "$ref": "#/definitions/answer" }`
   * and ajv reports errors inside a $ref'd schema with the definition's own path
   * ("#/definitions/answer/type", ".../maxLength", ".../items/type"). So
   * POST /receiveFormIntakeScope with answers {"Quillon Vastergaard": {"nested": true}} still answers
   * errors[0].pointer "/payload/answers/Quillon Vastergaard" (the question key, caller text, echoed).
   * Also "#/definitions/answer/..." errors of a too-long answer. Fix: decide from the instancePath
   * (segments below /payload/answers are caller keys), or compile the schemas with the map values
   * inlined. Flip to `it` once fixed.
   */
  it('problem bodies do not echo a caller-supplied answer key (BUG: callerKeyDepth misses $ref map values)', async () => {
    const key = `${FORM_PHI.firstName} ${FORM_PHI.lastName}`;
    const bodies = [
      await send(jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, formPhiBody({ answers: { [key]: { nested: true } } }))),
      await send(jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, formPhiBody({ answers: { [key]: 'x'.repeat(100_001) } }))),
      await send(jsonPost('/receiveFormIntakeScope', BULK_KEYS.forms.secret, formPhiBody({ answers: { [key]: [[1]] } }))),
    ];
    for (const res of bodies) expect(res.status).toBe(400);
    expect(bodies.flatMap((res) => phiIn(res.body))).toEqual([]);
  });

  it('the audit table does not store caller-supplied identifiers of not-found requests verbatim (was FINDING 2: audit of unverified ids)', async () => {
    const before = new Set((await scanAll(stack.tables.audit)).map((i) => `${i.pk?.S}|${i.sk?.S}`));
    const exportKey = { 'x-api-key': BULK_KEYS.export.secret };
    expect((await send({ method: 'GET', url: '/exportHl7PatientAdt?patientId=DEMO-000001', headers: exportKey })).status).toBe(404);
    expect((await send({ method: 'GET', url: '/exportHl7Note?patientId=demo-patient-1&noteId=DEMO-000002', headers: exportKey })).status).toBe(404);
    expect((await send({ method: 'GET', url: `/interopInbox/${FORM_PHI.lastName}`, headers: { 'x-api-key': BULK_KEYS.inbox.secret } })).status).toBe(404);
    const packetId = packetIds[0] ?? (await inboxPacket());
    expect((await send(jsonPost(`/interopInbox/${packetId}/route`, BULK_KEYS.inbox.secret, { patientId: 'DEMO-000003' }))).status).toBe(404);
    const added = (await scanAll(stack.tables.audit)).filter((i) => !before.has(`${i.pk?.S}|${i.sk?.S}`));
    expect(added.length).toBe(4);
    expect(added.flatMap((i) => phiIn(itemText(unmarshall(i))))).toEqual([]);
    tally.record([], () => 'unverified ids not audited');
  });
});

describe('PHI: summary', () => {
  it('prints the suite summary', () => {
    tally.print();
    expect(tally.failed).toBe(0);
  });
});
