/**
 * FHIR R4 intake (issue 29) against the local stack (dynalite, fauxqs, local KMS) through the local API
 * Gateway and the real authorizer:
 *   - a US Core lab DiagnosticReport (every value type) comes back through GET /exportHl7LabResult and
 *     GET /fhir/DiagnosticReport/{id} field by field;
 *   - a QuestionnaireResponse lands as the same packet posted as JSON would;
 *   - patient resolution, held records and uniform answers as for HL7 ORU; another partner's
 *     authority or form source refused without revealing anything;
 *   - transaction all or nothing, batch per entry, idempotency on Bundle.identifier.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { HeldRecordStore } from '../../lib/intake/held-records';
import { dynamoDbClient } from '../../lib/aws/clients';
import { logicalId } from '../../lib/fhir/logical-id';
import { firstSegment, parseHl7Message, valueAt } from '../../lib/hl7/parser';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack, type HttpResult } from '../support/local-stack';
import { r4Errors } from '../fhir/r4-validator';
import { CHART_PATIENT, EXPECTED_ANSWERS, LAB_OBSERVATION, LAB_REPORT, labReport, questionnaireResponse, smallReport, type Json } from './fixtures';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

const KEY = 'demo-fhir-intake-key';
let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

async function post(path: string, body: unknown, key = KEY, headers: Record<string, string> = {}): Promise<HttpResult> {
  return call(stack, 'POST', path, { headers: { 'x-api-key': key, 'content-type': 'application/fhir+json', ...headers }, body: JSON.stringify(body) });
}

async function get(path: string, key: string): Promise<HttpResult> {
  return call(stack, 'GET', path, { headers: { 'x-api-key': key } });
}

const resultIdOf = (res: HttpResult) => /resultId (lr_[0-9a-f]{32})/.exec(res.text)?.[1];
const packetIdOf = (res: HttpResult) => /packetId (fp_[0-9a-f]{32})/.exec(res.text)?.[1];

async function heldRecords() {
  return new HeldRecordStore(dynamoDbClient(), stack.tables.chart).list('held', 1000);
}

describe('POST /fhir/DiagnosticReport: the lab model, round trip through the exports', () => {
  const accession = unique('ACC');
  let resultId: string;
  let report: Json;

  beforeAll(async () => {
    const posted = labReport(accession);
    expect(r4Errors(posted as never)).toEqual([]);
    const res = await post('/fhir/DiagnosticReport', posted);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/fhir+json; charset=utf-8');
    resultId = resultIdOf(res)!;
    expect(resultId).toMatch(/^lr_/);
    const read = await get(`/fhir/DiagnosticReport/${logicalId('demo-patient-1', resultId)}`, 'demo-fhir-key');
    expect(read.status).toBe(200);
    report = read.json();
  });

  it('the FHIR read gives back every element of the posted report', () => {
    expect(report.status).toBe('final');
    expect(report.code.coding[0]).toMatchObject({ system: 'http://loinc.org', code: '24323-8' });
    expect(report.effectiveDateTime).toBe('2026-11-20T07:30:00Z');
    expect(report.issued).toBe('2026-11-20T09:00:00Z');
    const acsn = report.identifier.find((i: Json) => i.type.coding[0].code === 'ACSN');
    expect(acsn.value).toBe(accession);
    expect(acsn.system).toBe(`urn:interop:sender:DEMO-LAB-LIS:accession:${encodeURIComponent('urn:demo-lab:accession')}`);
    const plac = report.identifier.find((i: Json) => i.type.coding[0].code === 'PLAC');
    expect(plac.value).toBe(`ORD-${accession}`);
    const specimen = report.contained.find((r: Json) => r.resourceType === 'Specimen');
    expect(specimen.type.coding[0]).toMatchObject({ system: 'http://snomed.info/sct', code: '119297000' });
    expect(specimen.collection.collectedDateTime).toBe('2026-11-20T07:30:00Z');
    expect(specimen.identifier[0].value).toBe('SP-77');
  });

  it('each Observation: code, value[x] of every type, units, flags, range, status, time, performer, notes', () => {
    const obs = (n: number) => report.contained.find((r: Json) => r.id === `result-${n}`) as Json;
    expect(obs(1).code.coding[0]).toMatchObject({ system: 'http://loinc.org', code: '718-7' });
    expect(obs(1).valueQuantity).toEqual({ value: 13.5, unit: 'g/dL', system: 'http://unitsofmeasure.org', code: 'g/dL' });
    expect(obs(1).interpretation[0].coding[0].code).toBe('N');
    expect(obs(1).referenceRange[0]).toMatchObject({ text: '12-16', low: { value: 12 }, high: { value: 16 } });
    // 6.90: the written precision survives
    expect(obs(2).valueQuantity.value).toBe(6.9);
    expect(obs(2)._value ?? obs(2).valueQuantity._value).toEqual({
      extension: [{ url: 'http://hl7.org/fhir/StructureDefinition/quantity-precision', valueInteger: 2 }],
    });
    expect(obs(2).interpretation[0].coding[0].code).toBe('H');
    expect(obs(2).note).toEqual([{ text: 'fasting sample' }]);
    expect(obs(3).valueQuantity).toMatchObject({ value: 60, comparator: '>', code: 'mL/min/{1.73_m2}' });
    expect(obs(4).valueCodeableConcept.coding[0]).toMatchObject({ system: 'http://snomed.info/sct', code: '260385009', display: 'Negative' });
    expect(obs(4).interpretation[0].coding[0].code).toBe('NEG');
    expect(obs(5).valueRatio).toEqual({ numerator: { value: 1 }, denominator: { value: 128 } });
    expect(obs(6).valueRange).toMatchObject({ low: { value: 4.5, code: 'mmol/L' }, high: { value: 5.2, code: 'mmol/L' } });
    expect(obs(6).status).toBe('corrected');
    expect(obs(7).valueString).toBe('Specimen slightly haemolysed.\nRepeat advised.');
    expect(obs(7).performer).toEqual([{ display: 'Reference Lab North' }]);
    expect(obs(7).effectiveDateTime).toBe('2026-11-20T08:15:00Z');
    expect(obs(8).status).toBe('entered-in-error');
    expect(obs(1).status).toBe('final');
  });

  it('GET /exportHl7LabResult writes the same values in OBX (types, LOINC, UCUM, flags, status)', async () => {
    const res = await get(`/exportHl7LabResult?resultId=${resultId}`, 'demo-export-key');
    expect(res.status).toBe(200);
    const message = parseHl7Message(res.text);
    const obx = message.segments.filter((s) => s.name === 'OBX');
    expect(obx).toHaveLength(8);
    const row = (i: number) => ({
      type: valueAt(obx[i], 2),
      code: valueAt(obx[i], 3, 1),
      system: valueAt(obx[i], 3, 3),
      value: (obx[i]!.fields[5]?.[0] ?? []).map((c) => c[0] ?? '').join('^'),
      units: valueAt(obx[i], 6, 1),
      range: valueAt(obx[i], 7),
      flags: valueAt(obx[i], 8),
      status: valueAt(obx[i], 11),
    });
    expect(row(0)).toMatchObject({ type: 'NM', code: '718-7', system: 'LN', value: '13.5', units: 'g/dL', range: '12-16', flags: 'N' });
    expect(row(1)).toMatchObject({ type: 'NM', code: '2345-7', value: '6.90', units: 'mmol/L', range: '3.9-5.5', flags: 'H' });
    expect(row(2)).toMatchObject({ type: 'SN', value: '>^60' });
    expect(row(3)).toMatchObject({ value: '260385009^Negative^SCT', flags: 'NEG' });
    expect(row(3).type).toMatch(/^C(W)?E$/);
    expect(row(4)).toMatchObject({ type: 'SN', value: '^1^:^128' });
    expect(row(5)).toMatchObject({ type: 'SN', value: '^4.5^-^5.2', status: 'C' });
    expect(row(6)).toMatchObject({ type: 'TX' });
    expect(row(7)).toMatchObject({ status: 'W' });
    const obr = firstSegment(message, 'OBR');
    expect(valueAt(obr, 3, 1)).toBe(accession);
    expect(valueAt(obr, 2, 1)).toBe(`ORD-${accession}`);
    expect(valueAt(obr, 4, 1)).toBe('24323-8');
    expect(valueAt(firstSegment(message, 'PID'), 3, 1)).toBe('DEMO-000001');
  });

  it('GET /exportHl7PatientSummary carries the result: its OBR (accession) and the same OBX values', async () => {
    const res = await get('/exportHl7PatientSummary?patientId=demo-patient-1&limit=200', 'demo-export-key');
    expect(res.status).toBe(200);
    const segments = res.text.split('\r');
    const obrAt = segments.findIndex((s) => s.startsWith('OBR|') && s.split('|')[3]!.split('^')[0] === accession);
    expect(obrAt).toBeGreaterThan(0);
    const group = segments.slice(obrAt + 1);
    const end = group.findIndex((s) => !s.startsWith('OBX|') && !s.startsWith('NTE|'));
    const obx = group.slice(0, end === -1 ? undefined : end).filter((s) => s.startsWith('OBX|'));
    expect(obx).toHaveLength(8);
    expect(obx[0]!.split('|').slice(2, 9)).toEqual(['NM', '718-7^Hemoglobin [Mass/volume] in Blood^LN', '', '13.5', 'g/dL^g/dL^UCUM', '12-16', 'N']);
    expect(obx[2]!.split('|')[5]).toBe('>^60');
  });

  it('the same report again stores nothing new: 200, the same resultId', async () => {
    const again = await post('/fhir/DiagnosticReport', labReport(accession));
    expect(again.status).toBe(200);
    expect(resultIdOf(again)).toBe(resultId);
  });

  it('a corrected report becomes the current version (status corrected in the reads)', async () => {
    const corrected = await post('/fhir/DiagnosticReport', labReport(accession, { status: 'corrected' }));
    expect(corrected.status).toBe(201);
    expect(resultIdOf(corrected)).toBe(resultId);
    const read = await get(`/fhir/DiagnosticReport/${logicalId('demo-patient-1', resultId)}`, 'demo-fhir-key');
    expect(read.json().status).toBe('corrected');
  });
});

describe('subjects, held records and uniform answers', () => {
  it('Patient/<chart id>: 201 with a Location readable through GET /fhir/DiagnosticReport/{id}', async () => {
    const report = smallReport(unique('LOC'));
    report.contained = report.contained.filter((r: Json) => r.resourceType !== 'Patient');
    report.subject = { reference: 'Patient/demo-patient-2' };
    const res = await post('/fhir/DiagnosticReport', report);
    expect(res.status).toBe(201);
    const location = res.headers.get('location')!;
    expect(location).toMatch(/^DiagnosticReport\/demo-patient-2\.\./);
    const read = await get(`/fhir/${location}`, 'demo-fhir-key');
    expect(read.status).toBe(200);
    expect(read.json<Json>().contained[0].valueQuantity.value).toBe(5.4);
  });

  it('an unknown patient is held for review; the answer is the same as for a known one', async () => {
    const before = (await heldRecords()).length;
    const known = await post('/fhir/DiagnosticReport', smallReport(unique('K')));
    const unknownPatient = { ...CHART_PATIENT, identifier: [{ system: 'DEMO-LAB', value: unique('LABPAT') }], name: [{ family: 'Nobody', given: ['Known'] }] };
    const unknown = await post('/fhir/DiagnosticReport', smallReport(unique('U'), unknownPatient));
    expect(known.status).toBe(201);
    expect(unknown.status).toBe(201);
    const shape = (res: HttpResult) => ({
      status: res.status,
      location: res.headers.get('location'),
      keys: Object.keys(res.json()).sort(),
      text: (res.json<Json>().issue[0].diagnostics as string).replace(/lr_[0-9a-f]{32}/, 'ID'),
    });
    expect(shape(unknown)).toEqual(shape(known));
    const held = await heldRecords();
    expect(held.length).toBe(before + 1);
    const record = held.find((h) => h.body.kind === 'lab-result' && h.body.resultIds.includes(resultIdOf(unknown)!));
    expect(record).toMatchObject({ reason: 'patient-unresolved', provenance: { partnerId: 'demo-lab', sender: 'demo-lab' } });
    expect(record?.person.name).toEqual({ family: 'Nobody', given: 'Known' });
  });

  it('a held report is routed by staff like a held ORU result: then readable under the chart patient', async () => {
    const stranger = { ...CHART_PATIENT, identifier: [{ system: 'DEMO-LAB', value: unique('ROUTE') }], name: [{ family: 'Held', given: ['Person'] }] };
    const res = await post('/fhir/DiagnosticReport', smallReport(unique('R'), stranger));
    const resultId = resultIdOf(res)!;
    const held = (await heldRecords()).find((h) => h.body.kind === 'lab-result' && h.body.resultIds.includes(resultId))!;
    expect(held).toBeDefined();
    const routed = await call(stack, 'POST', `/interopInbox/held/${held.heldId}/route`, {
      headers: { 'x-api-key': 'demo-inbox-key', 'content-type': 'application/json' },
      body: JSON.stringify({ patientId: 'demo-patient-3' }),
    });
    expect(routed.status).toBe(200);
    const read = await get(`/fhir/DiagnosticReport/${logicalId('demo-patient-3', resultId)}`, 'demo-fhir-key');
    expect(read.status).toBe(200);
    expect(read.json<Json>().contained[0].valueQuantity.value).toBe(5.4);
  });

  it('a chart MRN whose demographics disagree is held (demographics-differ), answered the same', async () => {
    const wrongName = { ...CHART_PATIENT, name: [{ family: 'Different', given: ['Person'] }] };
    const res = await post('/fhir/DiagnosticReport', smallReport(unique('D'), wrongName));
    expect(res.status).toBe(201);
    const held = await heldRecords();
    expect(held.find((h) => h.body.kind === 'lab-result' && h.body.resultIds.includes(resultIdOf(res)!))?.reason).toBe('demographics-differ');
  });

  it("another partner's assigning authority (DEMO-EHR) is refused 403, nothing stored", async () => {
    const before = (await heldRecords()).length;
    const foreign = { ...CHART_PATIENT, identifier: [{ system: 'DEMO-EHR', value: 'EHR-1' }] };
    const res = await post('/fhir/DiagnosticReport', smallReport(unique('F'), foreign));
    expect(res.status).toBe(403);
    const outcome = res.json<Json>();
    expect(outcome.resourceType).toBe('OperationOutcome');
    expect(outcome.issue[0]).toMatchObject({ severity: 'error', code: 'forbidden', expression: ['DiagnosticReport.subject'] });
    expect(res.text).not.toContain('EHR-1');
    expect((await heldRecords()).length).toBe(before);
  });

  it('a key without interop:ingest:fhir gets 403; the scope is on demo-all-key', async () => {
    expect((await post('/fhir/DiagnosticReport', smallReport(unique('S')), 'demo-results-key')).status).toBe(403);
    expect((await post('/fhir/DiagnosticReport', smallReport(unique('S')), 'demo-all-key')).status).toBe(201);
  });

  it('the US Core lab rules: category LAB, effective[x], Observation category laboratory, a value or a dataAbsentReason', async () => {
    const report = smallReport(unique('USC'));
    delete report.category;
    delete report.effectiveDateTime;
    delete report.contained[1].category;
    delete report.contained[1].valueQuantity;
    expect(r4Errors(report as never)).toEqual([]);
    const res = await post('/fhir/DiagnosticReport', report);
    expect(res.status).toBe(400);
    const expressions = res.json<Json>().issue.map((i: Json) => i.expression?.[0]);
    expect(expressions).toEqual([
      'DiagnosticReport.category',
      'DiagnosticReport.effective[x]',
      "DiagnosticReport.contained.where(id='o1').category",
      "DiagnosticReport.contained.where(id='o1')",
    ]);
  });

  it('a structural error is a 400 OperationOutcome with expression paths', async () => {
    const bad = smallReport(unique('B'));
    delete bad.status;
    bad.issued = 'yesterday';
    bad.colour = 'red';
    const res = await post('/fhir/DiagnosticReport', bad);
    expect(res.status).toBe(400);
    const expressions = res.json<Json>().issue.map((i: Json) => i.expression?.[0]);
    expect(expressions).toEqual(expect.arrayContaining(['DiagnosticReport.status', 'DiagnosticReport.issued', 'DiagnosticReport.colour']));
  });
});

describe('POST /fhir/QuestionnaireResponse: the form intake', () => {
  it('lands as the same packet posted as JSON would (patient, answers of every type, form id, state)', async () => {
    const submission = unique('QR');
    const qr = questionnaireResponse(submission);
    expect(r4Errors(qr as never)).toEqual([]);
    const res = await post('/fhir/QuestionnaireResponse', qr);
    expect(res.status).toBe(201);
    const packetId = packetIdOf(res)!;
    const json = await call(stack, 'POST', '/receiveFormIntakeScope', {
      headers: { 'x-api-key': 'demo-all-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        payload: {
          sourceSystemId: 'demo-lab-forms',
          formId: 'http://example.org/Questionnaire/phq-2|1.0',
          submissionId: `${submission}-json`,
          patient: { externalPatientId: 'ext-42', firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12', email: 'alex@example.org' },
          answers: EXPECTED_ANSWERS,
        },
      }),
    });
    expect(json.status).toBe(202);
    const jsonPacketId = json.json<Json>().packetId as string;
    const read = async (id: string) => (await get(`/interopInbox/${id}`, 'demo-inbox-key')).json<Json>();
    const [fromFhir, fromJson] = [await read(packetId), await read(jsonPacketId)];
    const comparable = (p: Json) => ({ formId: p.formId, sourceSystemId: p.sourceSystemId, state: p.state, patient: p.patient, answers: p.answers });
    expect(comparable(fromFhir)).toEqual(comparable(fromJson));
    expect(fromFhir.answers).toEqual(EXPECTED_ANSWERS);
  });

  it('subject Patient/<chart id> with agreeing demographics is routed to that patient, as a JSON packet with patientId', async () => {
    const qr = questionnaireResponse(unique('QRP'), undefined, { subject: { reference: 'Patient/demo-patient-1' } });
    const res = await post('/fhir/QuestionnaireResponse', qr);
    expect(res.status).toBe(201);
    const item = await dynamoDbClient().send(
      new GetItemCommand({ TableName: stack.tables.forms, Key: { pk: { S: `PACKET#${packetIdOf(res)}` }, sk: { S: 'PACKET' } } }),
    );
    expect(item.Item?.state?.S).toBe('routed');
    expect(item.Item?.patientId?.S).toBe('demo-patient-1');
    const wrong = questionnaireResponse(
      unique('QRP'),
      { family: 'Other', given: ['Name'], birthDate: '1990-01-01' },
      { subject: { reference: 'Patient/demo-patient-1' } },
    );
    const held = await post('/fhir/QuestionnaireResponse', wrong);
    // the same answer; the packet waits for review instead
    expect(held.status).toBe(201);
    expect((await get(`/interopInbox/${packetIdOf(held)}`, 'demo-inbox-key')).json<Json>()).toMatchObject({ state: 'pending_review' });
  });

  it('the same response again: 200 the same packet; changed: 409, nothing stored', async () => {
    const submission = unique('QR');
    const first = await post('/fhir/QuestionnaireResponse', questionnaireResponse(submission));
    expect(first.status).toBe(201);
    const again = await post('/fhir/QuestionnaireResponse', questionnaireResponse(submission));
    expect(again.status).toBe(200);
    expect(packetIdOf(again)).toBe(packetIdOf(first));
    const changed = questionnaireResponse(submission);
    changed.item[0].answer[0].valueBoolean = true;
    const conflict = await post('/fhir/QuestionnaireResponse', changed);
    expect(conflict.status).toBe(409);
    expect(conflict.json<Json>().issue[0].code).toBe('conflict');
  });

  it("another partner's form source (demo-form-tool) and an unknown one get the same 403, nothing stored", async () => {
    const foreign = await post('/fhir/QuestionnaireResponse', questionnaireResponse(unique('QR'), undefined, { meta: { source: 'demo-form-tool' } }));
    const unknown = await post('/fhir/QuestionnaireResponse', questionnaireResponse(unique('QR'), undefined, { meta: { source: 'no-such-tool' } }));
    expect(foreign.status).toBe(403);
    expect(unknown.status).toBe(403);
    const strip = (res: HttpResult) => res.json<Json>().issue;
    expect(strip(foreign)).toEqual(strip(unknown));
    expect(foreign.text).not.toContain('demo-form-tool');
  });
});

describe('POST /fhir: transaction and batch Bundles', () => {
  const entry = (resource: Json, fullUrl?: string): Json => ({
    ...(fullUrl ? { fullUrl } : {}),
    resource,
    request: { method: 'POST', url: resource.resourceType },
  });

  function bundledReport(accession: string): Json[] {
    const patientUrl = `urn:uuid:${crypto.randomUUID()}`;
    const obsUrl = `urn:uuid:${crypto.randomUUID()}`;
    const { id: _id, ...patient } = CHART_PATIENT;
    return [
      entry(patient, patientUrl),
      entry(
        {
          resourceType: 'Observation',
          status: 'final',
          category: [LAB_OBSERVATION],
          code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }], text: 'Glucose' },
          valueQuantity: { value: 5.1, unit: 'mmol/L' },
        },
        obsUrl,
      ),
      entry({
        resourceType: 'DiagnosticReport',
        identifier: [{ system: 'urn:demo-lab:accession', value: accession }],
        status: 'final',
        category: [LAB_REPORT],
        code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] },
        subject: { reference: patientUrl },
        effectiveDateTime: '2026-11-20T07:30:00Z',
        issued: '2026-11-20T09:00:00Z',
        result: [{ reference: obsUrl }],
      }),
    ];
  }

  it('a transaction stores every entry and answers a transaction-response; a resend (same identifier) replays it', async () => {
    const bundle = {
      resourceType: 'Bundle',
      type: 'transaction',
      identifier: { system: 'urn:demo-lab:bundles', value: unique('B') },
      entry: [...bundledReport(unique('T')), entry(questionnaireResponse(unique('QR')))],
    };
    expect(r4Errors(bundle as never)).toEqual([]);
    const res = await post('/fhir', bundle);
    expect(res.status).toBe(200);
    const answer = res.json<Json>();
    expect(answer.type).toBe('transaction-response');
    expect(answer.entry.map((e: Json) => e.response.status)).toEqual(['200 OK', '200 OK', '201 Created', '201 Created']);
    const replay = await post('/fhir', bundle);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.json()).toEqual(answer);
    const changed = { ...bundle, entry: bundle.entry.slice(0, 3) };
    const conflict = await post('/fhir', changed);
    expect(conflict.status).toBe(409);
    expect(conflict.json<Json>().issue[0].expression).toEqual(['Bundle.identifier']);
  });

  it('a transaction with one bad entry is refused whole: nothing stored', async () => {
    const accession = unique('T');
    const good = bundledReport(accession);
    const bad = entry(smallReport(unique('X'), undefined, { status: 'unknown' }));
    const res = await post('/fhir', { resourceType: 'Bundle', type: 'transaction', entry: [...good, bad] });
    expect(res.status).toBe(400);
    expect(res.json<Json>().issue[0].expression).toEqual(['Bundle.entry[3].resource.status']);
    // the good report was not stored: sending it alone now creates it (201, not 200)
    const alone = await post('/fhir', { resourceType: 'Bundle', type: 'transaction', entry: good });
    expect(alone.json<Json>().entry[2].response.status).toBe('201 Created');
  });

  it('a batch answers each entry on its own', async () => {
    const res = await post('/fhir', {
      resourceType: 'Bundle',
      type: 'batch',
      entry: [
        entry(smallReport(unique('G'))),
        entry(smallReport(unique('X'), undefined, { status: 'unknown' })),
        { resource: smallReport(unique('Y')), request: { method: 'PUT', url: 'DiagnosticReport/1' } },
      ],
    });
    expect(res.status).toBe(200);
    const answer = res.json<Json>();
    expect(answer.type).toBe('batch-response');
    expect(answer.entry.map((e: Json) => e.response.status)).toEqual(['201 Created', '400 Bad Request', '400 Bad Request']);
    expect(answer.entry[1].response.outcome.issue[0].expression).toEqual(['Bundle.entry[1].resource.status']);
  });
});
