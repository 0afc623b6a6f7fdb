/**
 * Issue 29, "Public example resources ... are accepted": the US Core 9.0.0 Laboratory examples
 * (DiagnosticReport cbc and metabolic-panel with their 16 Observations) and three published
 * QuestionnaireResponses (US Core PHQ-9 and AUDIT-C, SDC Cardiology-MariaSantos), as published but for
 * the adaptations listed in README.md, posted to POST /fhir through the local API Gateway (local
 * stack: dynalite, fauxqs, local KMS). Each lab report comes back through GET /fhir/DiagnosticReport/{id}
 * and GET /exportHl7LabResult with the example's code, value, unit, interpretation, reference range and
 * status; each response lands in the staff inbox with its answers.
 */
import { parseHl7Message, valueAt } from '../../../lib/hl7/parser';
import { recordIdsOf } from '../../../lib/fhir/logical-id';
import type { LocalStack } from '../../../lib/local/stack';
import { call, startTestStack, type HttpResult } from '../../support/local-stack';
import { r4Errors } from '../../fhir/r4-validator';
import { usCoreLabViolations } from '../../fhir-profiles/profile-checker';
import { CHART_PATIENT_ID, QUESTIONNAIRE_RESPONSES, US_CORE_LAB_REPORTS, formTransaction, labTransaction, type Json } from './public-examples';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

const run = Date.now().toString(36);

async function post(body: unknown): Promise<HttpResult> {
  return call(stack, 'POST', '/fhir', {
    headers: { 'x-api-key': 'demo-fhir-intake-key', 'content-type': 'application/fhir+json' },
    body: JSON.stringify(body),
  });
}
const get = (path: string, key: string) => call(stack, 'GET', path, { headers: { 'x-api-key': key } });

/** the UCUM/LOINC content every export must keep, from a published Observation */
const loincOf = (o: Json) => (o.code.coding as Json[]).find((c) => c.system === 'http://loinc.org')!;

describe.each(Object.keys(US_CORE_LAB_REPORTS) as Array<keyof typeof US_CORE_LAB_REPORTS>)('US Core lab example %s', (name) => {
  const accession = `${name}-${run}`;
  const { bundle, report: posted, observations, supporting } = labTransaction(name, accession);
  let read: Json;
  let resultId: string;

  beforeAll(async () => {
    // what is posted is valid R4 (the independent validator), so a refusal would be the intake's fault
    for (const entry of bundle.entry as Json[]) expect([entry.resource.id, r4Errors(entry.resource)]).toEqual([entry.resource.id, []]);
    const res = await post(bundle);
    expect(`${res.status} ${res.status === 200 ? '' : res.text}`).toBe('200 ');
    const answer = res.json<Json>();
    expect(answer.type).toBe('transaction-response');
    const [reportEntry, ...supportingEntries] = answer.entry as Json[];
    expect(reportEntry!.response.status).toBe('201 Created');
    // the Observations, the Specimen and the ServiceRequest: taken as part of the report
    expect(supportingEntries.map((e) => e.response.status)).toEqual(Array(observations.length + supporting.length).fill('200 OK'));
    const location = String(reportEntry!.response.location);
    expect(location).toMatch(/^DiagnosticReport\//);
    const ids = recordIdsOf(location.slice('DiagnosticReport/'.length))!;
    expect(ids.patientId).toBe(CHART_PATIENT_ID);
    resultId = ids.recordId;
    const got = await get(`/fhir/${location}`, 'demo-fhir-key');
    expect(got.status).toBe(200);
    read = got.json<Json>();
  });

  it('the FHIR read gives back the report: code, status, effective, issued, category, subject', () => {
    expect(read.status).toBe(posted.status);
    expect(read.code.coding[0]).toMatchObject({ system: 'http://loinc.org', code: posted.code.coding[0].code });
    expect(read.effectiveDateTime).toBe(posted.effectiveDateTime);
    expect(read.issued).toBe(posted.issued);
    expect(read.subject.reference).toBe(`Patient/${CHART_PATIENT_ID}`);
    expect(read.identifier.find((i: Json) => i.type?.coding?.[0]?.code === 'ACSN').value).toBe(accession);
    expect(read.result).toHaveLength(observations.length);
  });

  it("the Specimen every Observation names comes back as the report's specimen: type, collection time, accession", () => {
    const sent = supporting.find((r) => r.resourceType === 'Specimen')!;
    const got = (read.contained as Json[]).find((r) => r.resourceType === 'Specimen')!;
    expect(got.type.coding[0]).toMatchObject({ system: sent.type.coding[0].system, code: sent.type.coding[0].code });
    expect(got.collection.collectedDateTime).toBe(sent.collection.collectedDateTime);
    expect(got.identifier[0].value).toBe(sent.accessionIdentifier.value);
  });

  it('each Observation comes back with its code, value, unit, interpretation, reference range and status', () => {
    const contained = (read.contained as Json[]).filter((r) => r.resourceType === 'Observation');
    expect(contained).toHaveLength(observations.length);
    observations.forEach((sent, i) => {
      const got = contained[i]!;
      expect(got.status).toBe(sent.status);
      expect(got.code.coding).toEqual(expect.arrayContaining([expect.objectContaining({ system: 'http://loinc.org', code: loincOf(sent).code })]));
      expect(got.valueQuantity).toMatchObject({ value: sent.valueQuantity.value, unit: sent.valueQuantity.unit });
      // a UCUM code comes back with its system; a unit without a code (serum-bun, serum-calcium) is text only (see README)
      if (sent.valueQuantity.code) expect(got.valueQuantity).toMatchObject({ system: sent.valueQuantity.system, code: sent.valueQuantity.code });
      else expect(got.valueQuantity.code).toBeUndefined();
      expect((got.interpretation ?? []).map((c: Json) => c.coding[0].code)).toEqual((sent.interpretation ?? []).map((c: Json) => c.coding[0].code));
      const range = sent.referenceRange?.[0];
      if (range)
        expect(got.referenceRange[0]).toMatchObject({
          ...(range.low ? { low: { value: range.low.value } } : {}),
          ...(range.high ? { high: { value: range.high.value } } : {}),
        });
      expect(got.effectiveDateTime).toBe(sent.effectiveDateTime);
    });
  });

  it('GET /exportHl7LabResult writes the same code, value, unit, range, flag and status in each OBX', async () => {
    const res = await get(`/exportHl7LabResult?resultId=${resultId}`, 'demo-export-key');
    expect(res.status).toBe(200);
    const message = parseHl7Message(res.text);
    const obx = message.segments.filter((s) => s.name === 'OBX');
    expect(obx).toHaveLength(observations.length);
    observations.forEach((sent, i) => {
      const row = obx[i]!;
      expect(valueAt(row, 3, 1)).toBe(loincOf(sent).code);
      expect(valueAt(row, 3, 3)).toBe('LN');
      expect(valueAt(row, 2)).toBe('NM');
      expect(Number(valueAt(row, 5))).toBe(sent.valueQuantity.value);
      expect(valueAt(row, 6, 1)).toBe(sent.valueQuantity.code ?? sent.valueQuantity.unit);
      expect(valueAt(row, 8)).toBe(sent.interpretation?.[0]?.coding[0].code ?? '');
      expect(valueAt(row, 11)).toBe('F');
    });
    expect(
      valueAt(
        message.segments.find((s) => s.name === 'OBR'),
        4,
        1,
      ),
    ).toBe(posted.code.coding[0].code);
  });

  it('what the service exports for it conforms to US Core DiagnosticReport (Lab) and Laboratory Result Observation', () => {
    expect(usCoreLabViolations(read)).toEqual([]);
  });
});

/** The answers docs/fhir.md says a response maps to, for the value types the published examples use. */
function expectedAnswers(items: Json[] = [], prefix = '', out: Json = {}): Json {
  for (const item of items) {
    const key = prefix ? `${prefix}.${item.linkId}` : item.linkId;
    const values = (item.answer ?? []).map((a: Json) => {
      if (a.valueCoding) return a.valueCoding.system ? `${a.valueCoding.system}|${a.valueCoding.code}` : a.valueCoding.code;
      const name = Object.keys(a).find((k) => k.startsWith('value'));
      if (!name) throw new Error(`no value in ${key}`);
      if (!['valueString', 'valueDecimal', 'valueInteger', 'valueBoolean', 'valueDate', 'valueDateTime'].includes(name))
        throw new Error(`${name} not expected here`);
      return a[name];
    });
    if (values.length > 0) out[key] = values.length === 1 ? values[0] : values;
    for (const a of item.answer ?? []) expectedAnswers(a.item, key, out);
    expectedAnswers(item.item, key, out);
  }
  return out;
}

describe.each(QUESTIONNAIRE_RESPONSES.map((file) => [file]))('published QuestionnaireResponse %s', (file) => {
  it('is accepted and lands in the inbox with its answers', async () => {
    const submissionId = `${file.replace(/^.*\/QuestionnaireResponse-|\.json$/g, '')}-${run}`;
    const { bundle, response, patient } = formTransaction(file, submissionId);
    for (const entry of bundle.entry as Json[]) expect([entry.resource.id, r4Errors(entry.resource)]).toEqual([entry.resource.id, []]);
    const res = await post(bundle);
    expect(`${res.status} ${res.status === 200 ? '' : res.text}`).toBe('200 ');
    const entries = res.json<Json>().entry as Json[];
    expect(entries[1]!.response.status).toBe('201 Created');
    // the entry's outcome names the packet (a form packet has no FHIR read, so no location)
    const packetId = /packetId (fp_[0-9a-f]{32})/.exec(entries[1]!.response.outcome.issue[0].diagnostics)?.[1];
    expect(packetId).toMatch(/^fp_/);
    const packet = (await get(`/interopInbox/${packetId}`, 'demo-inbox-key')).json<Json>();
    expect(packet).toMatchObject({ formId: response.questionnaire, sourceSystemId: 'demo-lab-forms' });
    // the example patients are in no chart: the packet waits in the inbox for a reviewer
    expect(['pending_review', 'pending_match']).toContain(packet.state);
    expect(packet.patient).toMatchObject({ lastName: patient.name[0].family, firstName: patient.name[0].given[0], dob: patient.birthDate });
    // every answered item is there, keyed by linkId (nested: parent.child), with its value as docs/fhir.md maps it
    const expected = expectedAnswers(response.item);
    expect(Object.keys(expected).length).toBeGreaterThan(3);
    expect(packet.answers).toEqual(expected);
  });
});
