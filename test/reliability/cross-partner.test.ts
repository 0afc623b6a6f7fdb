/**
 * Reliability suite: cross-partner, lab intake and the HL7 exports (issue 12). A second partner
 * tries to overwrite, shadow or probe the first partner's data; every attempt must fail: 0
 * successes.
 *
 * Partners: demo-lab (the first; sender ids demo-lab, DEMO-LAB-LIS) submits results; rel-rogue-lab
 * (the second; sender id rogue-lab only) has a results key and a second key with the export scope;
 * rel-rogue-ehr has an export key and its own receiving application.
 *
 * What counts as a success for the attacker: any change to the first partner's result (versions,
 * current version, summary value), a 2xx for a sender id the partner does not own, another
 * partner's stored answer replayed or a 409 caused by another partner's x-request-id, an answer
 * (status, body shape, detail) that differs between the first partner's existing accession and
 * an accession nobody used, or an export carrying another partner's MSH-5/6 or answering a
 * results key.
 */
import { Scopes } from '../../lib/config/service';
import type { LocalStack } from '../../lib/local/stack';
import { labResultStore } from '../../lib/results/result-wiring';
import { BULK_KEYS, createKey, jsonPost, keyStore, labBody, send, startReliabilityStack, Tally, type Res } from './support';

let stack: LocalStack;
const tally = new Tally('cross-partner');

const FIRST = BULK_KEYS.results.secret; // partner demo-lab
const ROGUE_RESULTS = 'rel-rogue-lab-results-key';
const ROGUE_EXPORT = 'rel-rogue-lab-export-key';
const ROGUE_EHR = 'rel-rogue-ehr-export-key';

beforeAll(async () => {
  stack = await startReliabilityStack();
  const store = keyStore(stack);
  await store.putPartner({
    partnerId: 'rel-rogue-lab',
    name: 'Rogue Lab',
    policy: 'active',
    rateLimit: 100_000,
    rateWindowSeconds: 60,
    allowedSenderIds: ['rogue-lab'],
    receivingApplication: 'ROGUE-LIS',
    receivingFacility: 'ROGUE-LAB',
  });
  await store.putPartner({
    partnerId: 'rel-rogue-ehr',
    name: 'Rogue EHR',
    policy: 'active',
    rateLimit: 100_000,
    rateWindowSeconds: 60,
    allowedSenderIds: [],
    receivingApplication: 'ROGUE-EHR',
    receivingFacility: 'ROGUE-CLINIC',
  });
  await createKey(stack, { secret: ROGUE_RESULTS, partnerId: 'rel-rogue-lab', scopes: [Scopes.ingestResults], rateLimit: 100_000, rateWindowSeconds: 60 });
  await createKey(stack, { secret: ROGUE_EXPORT, partnerId: 'rel-rogue-lab', scopes: [Scopes.exportHl7], rateLimit: 100_000, rateWindowSeconds: 60 });
  await createKey(stack, { secret: ROGUE_EHR, partnerId: 'rel-rogue-ehr', scopes: [Scopes.exportHl7], rateLimit: 100_000, rateWindowSeconds: 60 });
});

afterAll(async () => {
  await stack?.close();
});

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

interface FirstResult {
  body: { data: Record<string, unknown> };
  requestId: string;
  resultId: string;
  version: string;
  answer: Record<string, unknown>;
}

/** The first partner stores a result (with x-request-id) and we remember everything about it. */
async function firstPartnerResult(overrides: Record<string, unknown> = {}): Promise<FirstResult> {
  const body = labBody({ accessionNumber: unique('XP-ACC'), results: { testName: 'Potassium', result: '4.1' }, ...overrides });
  const requestId = unique('xp-rid');
  const res = await send(jsonPost('/receiveTestData', FIRST, body, { 'x-request-id': requestId }));
  if (res.status !== 200) throw new Error(`setup: first partner got ${res.status} ${res.body}`);
  const answer = res.json();
  return { body, requestId, resultId: String(answer.resultId), version: String(answer.version), answer };
}

/** What the first partner's result looks like in storage (versions, current version, its values). */
async function stateOf(resultId: string): Promise<string> {
  const store = labResultStore();
  const versions = await store.listVersions(resultId);
  const current = await store.readCurrent(resultId);
  return JSON.stringify({ versions: versions.map((v) => [v.versionId, v.status, v.senderId]), current: current?.versionId, results: current?.results });
}

/** The answer with the per-request parts removed, for "same answer either way" comparisons. */
function shape(res: Res): string {
  let body: unknown = res.body;
  try {
    const parsed = res.json<Record<string, unknown>>();
    const { requestId: _r, resultId: _i, version: _v, ...rest } = parsed;
    body = rest;
  } catch {
    // not JSON: compare the text
  }
  return JSON.stringify({ status: res.status, type: res.headers['content-type'], body });
}

function record(issues: string[], label: string): void {
  tally.record(issues, () => label);
  if (issues.length) console.log(`cross-partner failure: ${label}: ${issues.join('; ')}`);
}

describe('cross-partner: lab intake', () => {
  it('overwrite: the second partner sends the first partner senderID + accession (every status, case and spacing variant)', async () => {
    const first = await firstPartnerResult();
    const before = await stateOf(first.resultId);
    const data = first.body.data;
    const attempts: Array<[string, Record<string, unknown>]> = [
      ['same body', {}],
      ...['preliminary', 'final', 'corrected', 'amended', 'cancelled', 'C', 'X'].map((status): [string, Record<string, unknown>] => [
        `status ${status}`,
        { status, results: { testName: 'Potassium', result: '7.9' } },
      ]),
      ['sender upper case', { senderID: String(data.senderID).toUpperCase() }],
      ['the first partner second sender id', { senderID: 'DEMO-LAB-LIS' }],
      ['sender *', { senderID: '*' }],
      ['sender with trailing space', { senderID: `${data.senderID} ` }],
      ['sender with zero-width space', { senderID: `${data.senderID}\u200b` }],
    ];
    for (const [label, change] of attempts) {
      const res = await send(jsonPost('/receiveTestData', ROGUE_RESULTS, { data: { ...data, ...change } }));
      const issues: string[] = [];
      if (res.status < 400 || res.status > 403) issues.push(`status ${res.status} (want 400/403)`);
      if (res.body.includes('lr_') || res.body.includes('lv_')) issues.push('answer names a result or version');
      if ((await stateOf(first.resultId)) !== before) issues.push("the first partner's result changed");
      record(issues, `overwrite: ${label}`);
    }
  });

  it('shadow: the same accession under the second partner own sender id is a separate result; the first stays current', async () => {
    const first = await firstPartnerResult({ patientID: 'demo-patient-2' });
    const before = await stateOf(first.resultId);
    for (const status of ['preliminary', 'final', 'corrected', 'amended', 'cancelled']) {
      const body = {
        data: {
          ...first.body.data,
          senderID: 'rogue-lab',
          status,
          ResultedDateUTC: new Date().toISOString(),
          results: { testName: 'Potassium', result: '7.9' },
        },
      };
      const res = await send(jsonPost('/receiveTestData', ROGUE_RESULTS, body));
      const issues: string[] = [];
      if (res.status !== 200) issues.push(`status ${res.status} for its own sender id`);
      else if (res.json().resultId === first.resultId) issues.push('the second partner result shares the first partner result id');
      if ((await stateOf(first.resultId)) !== before) issues.push("the first partner's result changed");
      const current = await labResultStore().readCurrentByAccession('demo-lab', String(first.body.data.accessionNumber));
      if (current?.versionId !== first.version || current.results[0]?.result !== '4.1') issues.push('the first partner current version moved');
      record(issues, `shadow: ${status}`);
    }
  });

  it('x-request-id: the second partner reusing the first partner id is neither a replay nor a conflict', async () => {
    const first = await firstPartnerResult();
    const before = await stateOf(first.resultId);
    // 1. the first partner's exact body and id: refused by the sender check, nothing replayed
    const same = await send(jsonPost('/receiveTestData', ROGUE_RESULTS, first.body, { 'x-request-id': first.requestId }));
    record(
      [
        ...(same.status === 403 ? [] : [`status ${same.status} (want 403)`]),
        ...(same.headers['idempotent-replayed'] ? ['replayed the first partner answer'] : []),
        ...(same.body.includes(first.resultId) ? ['leaks the first result id'] : []),
      ],
      'x-request-id: first body, second key',
    );
    // 2. its own body under the first partner's id: processed as its own request
    const own = await send(
      jsonPost('/receiveTestData', ROGUE_RESULTS, labBody({ senderID: 'rogue-lab', accessionNumber: unique('XP-OWN') }), { 'x-request-id': first.requestId }),
    );
    record(
      [
        ...(own.status === 200 ? [] : [`status ${own.status} (want 200: a fresh request of its own)`]),
        ...(own.headers['idempotent-replayed'] ? ['replayed the first partner answer'] : []),
        ...(own.status === 200 && own.json().resultId === first.resultId ? ['answered the first result id'] : []),
      ],
      'x-request-id: own body, first partner id',
    );
    // 3. the other way round: the second partner takes an id first; the first partner is not blocked by it
    const rid = unique('xp-taken');
    await send(jsonPost('/receiveTestData', ROGUE_RESULTS, labBody({ senderID: 'rogue-lab', accessionNumber: unique('XP-TAKE') }), { 'x-request-id': rid }));
    const mine = await send(jsonPost('/receiveTestData', FIRST, labBody({ accessionNumber: unique('XP-MINE') }), { 'x-request-id': rid }));
    record(
      [
        ...(mine.status === 200 && !mine.headers['idempotent-replayed']
          ? []
          : [`first partner got ${mine.status} ${mine.headers['idempotent-replayed'] ?? ''}`]),
      ],
      'x-request-id: taken first by the second partner',
    );
    // 4. the first partner's replay still answers its own first response
    const replay = await send(jsonPost('/receiveTestData', FIRST, first.body, { 'x-request-id': first.requestId }));
    record(
      [
        ...(replay.status === 200 && replay.headers['idempotent-replayed'] === 'true' && replay.json().version === first.version
          ? []
          : [`first partner replay ${replay.status}`]),
      ],
      'x-request-id: first partner replay intact',
    );
    record((await stateOf(first.resultId)) === before ? [] : ["the first partner's result changed"], 'x-request-id: first result unchanged');
  });

  it('probe: an existing accession of the first partner and one nobody used get the same answer', async () => {
    const first = await firstPartnerResult();
    const fresh = { ...first.body.data, accessionNumber: unique('XP-NEVER') };
    const cases: Array<[string, (data: Record<string, unknown>) => Record<string, unknown>, string]> = [
      ['under the first partner sender', (d) => d, ROGUE_RESULTS],
      ['under its own sender', (d) => ({ ...d, senderID: 'rogue-lab' }), ROGUE_RESULTS],
      ['invalid body', (d) => ({ ...d, status: 'nope' }), ROGUE_RESULTS],
      ['export key on intake', (d) => d, ROGUE_EXPORT],
    ];
    for (const [label, change, key] of cases) {
      const existing = await send(jsonPost('/receiveTestData', key, { data: change(first.body.data) }));
      const never = await send(jsonPost('/receiveTestData', key, { data: change({ ...fresh, accessionNumber: unique('XP-NEVER') }) }));
      record(
        shape(existing) === shape(never) ? [] : [`answers differ: ${shape(existing).slice(0, 200)} vs ${shape(never).slice(0, 200)}`],
        `probe accession: ${label}`,
      );
    }
    // known vs unknown patient under its own sender: same answer (item 2)
    const known = await send(jsonPost('/receiveTestData', ROGUE_RESULTS, labBody({ senderID: 'rogue-lab', patientID: 'demo-patient-1' })));
    const unknown = await send(jsonPost('/receiveTestData', ROGUE_RESULTS, labBody({ senderID: 'rogue-lab', patientID: 'no-such-patient-xp' })));
    record(shape(known) === shape(unknown) ? [] : [`answers differ: ${shape(known)} vs ${shape(unknown)}`], 'probe patient index through lab intake');
  });
});

describe('cross-partner: HL7 exports', () => {
  const exports = [
    '/exportHl7PatientAdt?patientId=demo-patient-1',
    '/exportHl7PatientSummary?patientId=demo-patient-1',
    '/exportHl7Encounter?patientId=demo-patient-1&encounterId=demo-encounter-1',
    '/exportHl7Note?patientId=demo-patient-2&noteId=demo-note-2',
    '/exportHl7Assessment?patientId=demo-patient-1&assessmentId=demo-assessment-1',
  ];

  it('a results key of either lab partner cannot export; the answer is the same for known and unknown ids', async () => {
    for (const url of exports) {
      for (const key of [ROGUE_RESULTS, FIRST]) {
        const res = await send({ method: 'GET', url, headers: { 'x-api-key': key } });
        const unknown = await send({
          method: 'GET',
          url: url.replace(/demo-(patient|note|encounter|assessment)-\d/g, 'demo-$1-404'),
          headers: { 'x-api-key': key },
        });
        const issues: string[] = [];
        if (res.status !== 403) issues.push(`status ${res.status} (want 403)`);
        if (res.body.includes('MSH|')) issues.push('answered an HL7 message');
        if (shape(res) !== shape(unknown)) issues.push('answer differs for unknown ids');
        record(issues, `export with results key ${key === FIRST ? 'first' : 'second'}: ${url.split('?')[0]}`);
      }
    }
  });

  it("an export is addressed to the caller's own partner (MSH-5/6), never to another partner's configuration", async () => {
    for (const url of exports) {
      for (const [key, app, facility] of [
        [ROGUE_EHR, 'ROGUE-EHR', 'ROGUE-CLINIC'],
        [ROGUE_EXPORT, 'ROGUE-LIS', 'ROGUE-LAB'],
        [BULK_KEYS.export.secret, 'DEMO-EHR', 'DEMO-CLINIC'],
      ] as const) {
        const res = await send({ method: 'GET', url, headers: { 'x-api-key': key, 'x-request-id': 'xp-shared-request-id' } });
        const msh = res.body.split('\r')[0]!.split('|');
        const issues: string[] = [];
        if (res.status !== 200) issues.push(`status ${res.status}`);
        else if (msh[4] !== app || msh[5] !== facility) issues.push(`MSH-5/6 ${msh[4]}/${msh[5]}, want ${app}/${facility}`);
        if (res.headers['idempotent-replayed']) issues.push('an export was replayed');
        record(issues, `export addressing ${app}: ${url.split('?')[0]}`);
      }
    }
  });

  it("the same x-request-id from another partner's key gets its own fresh message (MSH-10 differs)", async () => {
    for (const url of exports) {
      const a = await send({ method: 'GET', url, headers: { 'x-api-key': BULK_KEYS.export.secret, 'x-request-id': 'xp-same-id' } });
      const b = await send({ method: 'GET', url, headers: { 'x-api-key': ROGUE_EHR, 'x-request-id': 'xp-same-id' } });
      // the first MSH (the summary is an FHS/BHS batch by default)
      const control = (r: Res) => (r.body.split('\r').find((segment) => segment.startsWith('MSH|')) ?? '').split('|')[9];
      record(
        a.status === 200 && b.status === 200 && control(a) !== control(b) ? [] : [`statuses ${a.status}/${b.status}, MSH-10 ${control(a)}/${control(b)}`],
        `export x-request-id reuse: ${url.split('?')[0]}`,
      );
    }
  });

  it("one partner exhausting its rate limit does not touch another partner's", async () => {
    const secret = unique('xp-limited');
    await createKey(stack, { secret, partnerId: 'rel-rogue-ehr', scopes: [Scopes.exportHl7], rateLimit: 3, rateWindowSeconds: 3600 });
    for (let i = 0; i < 6; i++) await send({ method: 'GET', url: exports[0]!, headers: { 'x-api-key': secret } });
    const other = await send({ method: 'GET', url: exports[0]!, headers: { 'x-api-key': BULK_KEYS.export.secret } });
    record(other.status === 200 ? [] : [`status ${other.status}`], 'rate limit isolation');
  });

  afterAll(() => {
    tally.print();
  });

  it('0 successes', () => {
    expect(tally.failures).toEqual([]);
    expect(tally.failed).toBe(0);
    expect(tally.total).toBeGreaterThanOrEqual(59);
  });
});
