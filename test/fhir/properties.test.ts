/**
 * Property tests of lib/fhir: chart data with hostile text in every text field (HL7 delimiters,
 * escape-looking text, CR/LF/CRLF/TAB, other control characters, unpaired surrogates, emoji, combining
 * marks, U+2028...) must give resources that
 * - the R4 validator accepts with 0 errors (test/fhir/r4-validator.ts), and
 * - carry every text value unchanged, except what R4 JSON cannot carry: characters below U+0020
 *   other than TAB/CR/LF are dropped, an unpaired surrogate becomes U+FFFD, a value with nothing
 *   printable left is omitted; a note's text is its attachment's UTF-8 bytes exactly.
 * The expected values are computed here, independently of lib/fhir/text.ts. Fixed seeds, 200 runs.
 */
import fc from 'fast-check';
import type { Observation, Resource } from '@medplum/fhirtypes';
import { assessmentObservation, documentReferenceResource, encounterResource, labDiagnosticReport, patientResource } from '../../lib/fhir';
import * as arb from '../hl7/arbitraries';
import { r4Errors } from './r4-validator';

const RUNS = 200;
/** chart ids short enough that `<patient>..<record>` stays within the R4 id's 64 characters (see logical-id.ts) */
const chartId = fc.stringMatching(/^[A-Za-z0-9._:-]{1,8}$/);

/** What a FHIR string should hold for this chart text (undefined: the element is absent). */
function expected(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) continue;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += text[i]! + text[i + 1]!;
        i++;
      } else out += '\uFFFD';
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      out += '\uFFFD';
      continue;
    }
    out += text[i]!;
  }
  return /\S/.test(out) ? out : undefined;
}

function valid(resource: Resource): void {
  const errors = r4Errors(resource);
  if (errors.length) throw new Error(`${resource.resourceType}: ${errors.join('; ')}\n${JSON.stringify(resource).slice(0, 2000)}`);
}

const params = (seed: number) => ({ seed, numRuns: RUNS });

test('Patient: valid R4, names, address, telecom, MRN kept', () => {
  fc.assert(
    fc.property(arb.patient, chartId, (patient, patientId) => {
      const r = patientResource({ ...patient, patientId });
      valid(r);
      expect(r.identifier![0]!.value).toBe(expected(patient.mrn));
      expect(r.name?.[0]?.family).toBe(expected(patient.name.family) === undefined && r.name === undefined ? undefined : expected(patient.name.family));
      const given = [expected(patient.name.given), expected(patient.name.middle)].filter((g) => g !== undefined);
      expect(r.name?.[0]?.given ?? []).toEqual(r.name ? given : []);
      expect(r.address?.[0]?.city).toBe(expected(patient.address?.city));
      expect(r.address?.[0]?.line ?? []).toEqual([expected(patient.address?.line1), expected(patient.address?.line2)].filter((l) => l !== undefined));
      expect(r.telecom?.find((t) => t.system === 'phone')?.value).toBe(expected(patient.phone));
      expect(r.telecom?.find((t) => t.system === 'email')?.value).toBe(expected(patient.email));
      expect(r.birthDate).toBe(patient.birthDate);
    }),
    params(9101),
  );
});

test('Encounter: valid R4, reason, location, diagnoses kept', () => {
  fc.assert(
    fc.property(arb.encounter, chartId, chartId, (encounter, patientId, encounterId) => {
      const r = encounterResource({ ...encounter, patientId, encounterId });
      valid(r);
      expect(r.reasonCode?.[0]?.text).toBe(expected(encounter.reason));
      expect(r.location?.[0]?.location.display).toBe(expected(encounter.location));
      expect(r.period!.start).toBe(encounter.admitAt);
      const displays = (r.contained ?? [])
        .filter((c) => c.resourceType === 'Condition')
        .map((c) => (c as { code: { coding?: Array<{ display?: string }> } }).code.coding?.[0]?.display);
      expect(displays).toEqual(
        (encounter.diagnoses ?? []).map((d) => (expected(d.code) === undefined && expected(d.display) === undefined ? undefined : expected(d.display))),
      );
    }),
    params(9102),
  );
});

test('DocumentReference: valid R4, the note text is the attachment, byte for byte', () => {
  fc.assert(
    fc.property(arb.note, chartId, chartId, (note, patientId, noteId) => {
      const r = documentReferenceResource({ ...note, patientId, noteId });
      valid(r);
      const data = r.content[0]!.attachment.data;
      expect(data === undefined ? '' : Buffer.from(data, 'base64').toString('utf8')).toBe(Buffer.from(note.text, 'utf8').toString('utf8'));
      // without unpaired surrogates (not representable in UTF-8) the text is exactly the chart's
      if (!/[\uD800-\uDFFF]/.test(note.text)) expect(data === undefined ? '' : Buffer.from(data, 'base64').toString('utf8')).toBe(note.text);
    }),
    params(9103),
  );
});

test('Observation (assessment): valid R4, text items and interpretation kept', () => {
  fc.assert(
    fc.property(arb.assessment, chartId, chartId, (assessment, patientId, assessmentId) => {
      const r: Observation = assessmentObservation({ ...assessment, patientId, assessmentId });
      valid(r);
      expect(r.interpretation?.[0]?.text).toBe(expected(assessment.interpretation));
      assessment.items.forEach((item, i) => {
        const c = r.component![i]!;
        if (item.kind === 'text' && typeof item.value === 'string') expect(c.valueString).toBe(expected(item.value));
        if (item.kind === 'numeric' && typeof item.value === 'number' && Number.isFinite(item.value)) expect(c.valueQuantity!.value).toBe(item.value);
        if (item.kind === 'numeric' && typeof item.value === 'string' && c.valueString !== undefined) expect(c.valueString).toBe(expected(item.value));
        if (item.kind === 'numeric' && typeof item.value === 'string' && c.valueQuantity) expect(String(c.valueQuantity.value)).toBe(item.value);
      });
    }),
    params(9104),
  );
});

/** A comment row (issue 27: a note of the order, never an Observation), as lib/hl7 reads it. */
const isCommentRow = (test: { testName: string; result: string; code?: string }) =>
  !(typeof test.code === 'string' && test.code.trim() !== '') &&
  /\b(?:comments?|notes?|remarks?)\s*$/i.test(test.testName) &&
  !/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(test.result);
const COMPARATOR_TEXT = /^\s*(<=|>=|<|>|=)\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*$/;

test('DiagnosticReport (lab result): valid R4, test names and results kept', () => {
  fc.assert(
    fc.property(arb.labResult, chartId, (lab, patientId) => {
      const r = labDiagnosticReport(patientId, { ...lab, resultId: 'lr_0123456789abcdef0123456789abcdef' });
      valid(r);
      const observations = (r.contained ?? []).filter((c): c is Observation => c.resourceType === 'Observation');
      lab.results
        .filter((test) => !isCommentRow(test))
        .forEach((test, i) => {
          const o = observations[i]!;
          expect(o.code.text).toBe(expected(test.testName) ?? 'Unnamed test');
          if (lab.status === 'cancelled') {
            // issue 27: a cancelled observation carries no value
            expect([o.valueQuantity, o.valueString, o.valueRatio]).toEqual([undefined, undefined, undefined]);
            expect(o.dataAbsentReason?.coding?.[0]?.code).toBe('not-performed');
          } else if (o.valueQuantity?.comparator) {
            const [, comparator, number] = COMPARATOR_TEXT.exec(test.result)!;
            expect([o.valueQuantity.comparator, o.valueQuantity.value]).toEqual([comparator, Number(number)]);
          } else if (o.valueQuantity) {
            expect(COMPARATOR_TEXT.test(test.result) || String(o.valueQuantity.value) === test.result).toBe(true);
          } else if (!o.valueRatio) expect(o.valueString).toBe(expected(test.result));
          expect(o.referenceRange?.[0]?.text).toBe(expected(test.referenceRange));
        });
      expect(observations).toHaveLength(lab.results.filter((test) => !isCommentRow(test)).length);
      // comment rows are notes of the order the report answers
      const order = r.contained?.find((c) => c.resourceType === 'ServiceRequest');
      const commentNotes = lab.results.filter(isCommentRow).map((test) => expected(`${test.testName}: ${test.result}`));
      expect((order as { note?: Array<{ text: string }> } | undefined)?.note?.map((n) => n.text) ?? []).toEqual(commentNotes.filter((t) => t !== undefined));
    }),
    params(9105),
  );
});
