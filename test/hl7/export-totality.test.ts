/**
 * Export totality: every record the record rules (lib/chart/record-rules.ts) accept can be written by
 * every export. Arbitrary patients, notes, encounters, assessments and lab result submissions with
 * hostile text (every code point class: controls C0/C1, NUL, unpaired surrogates, emoji, combining
 * marks, line separators, the HL7 delimiters | ^ ~ \ &, escape-looking text, very long strings) and
 * odd times (year 1-9999, leap seconds, offsets, 1899/1900, the future) are checked; each accepted one
 * is fed to every HL7 message builder (ADT, encounter ADT/ORU, MDM note, assessment ORU, patient
 * summary batch and ORU, lab result ORU) and every FHIR resource builder (Patient, Encounter,
 * DocumentReference, Observation, DiagnosticReport), and the JSON is serialised. Any throw fails.
 * Pure functions only, fixed seeds.
 */
import fc from 'fast-check';
import { checkAssessmentValues, checkEncounterValues, checkLabResultValues, checkNoteValues, checkPatientValues } from '../../lib/chart/record-rules';
import type { Assessment, ChartRecord, Encounter, Note, Patient } from '../../lib/chart/types';
import { assessmentObservation, documentReferenceResource, encounterResource, patientResource } from '../../lib/fhir/chart-resources';
import { labDiagnosticReport } from '../../lib/fhir/lab-report';
import {
  encodeAssessmentMessage,
  encodeEncounterMessage,
  encodeLabResultMessage,
  encodeNoteMessage,
  encodePatientAdtMessage,
  encodePatientSummary,
  type LabResultSummary,
  type MessageHeaderContext,
} from '../../lib/hl7';
import { acceptLabResult } from '../../lib/results/validation';
import { ValidationFailedError } from '../../lib/domain-errors';
import { Hl7ParseError } from '../../lib/hl7/parse-error';
import { parseHl7Message, type ParsedMessage } from '../../lib/hl7/parser';
import { AckRejection, intakeMappings } from '../../lib/intake/message-handlers';

const RUNS = 500;
const NOW = new Date('2025-06-01T12:00:00Z');
const PATIENT_ID = 'patient-under-test';

const header: MessageHeaderContext = {
  sendingApplication: 'INTEROP',
  sendingFacility: 'INTEROP-FACILITY',
  receivingApplication: 'PARTNER',
  receivingFacility: 'PARTNER-FACILITY',
  timestamp: NOW,
  controlId: 'CTRL0001',
  identifierNamespaces: { entity: 'INTEROP', clinician: 'INTEROP', visit: 'INTEROP' },
};

// ---- hostile text ----

/** accepted by the record rules: delimiters, escapes, every script, emoji, combining marks, line separators */
const HOSTILE_ACCEPTED = [
  '|', '^', '~', '\\', '&', ' ', '\\F\\', '\\S\\', '\\E\\', '\\T\\', '\\R\\', '\\.br\\', '\\X00\\', '\\X0D\\',
  '\\H\\', '\\Zxx\\', '😀', '👩‍⚕️', 'e\u0301', 'é', 'ß', 'Ω', '中文', 'ﬁ', '\uDBFF\uDFFF', '\u2028', '\u2029', '\u00A0',
  '\uFEFF', '\uFFFD', '\uFFFF', '"', '<', '>', '%', '#', '-', '.', '_', ':', '/', 'MSH|', '\\rPID|',
]; // prettier-ignore
/** refused in one-line values (some also in multi-line text) */
const HOSTILE_REFUSED = [
  '\r', '\n', '\r\n', '\t', '\u0000', '\u0001', '\u0007', '\u000b', '\u000c', '\u001b', '\u007f', '\u0080', '\u0085', '\u009f',
  '\uD800', '\uDC00',
]; // prettier-ignore

const plain = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ');
const acceptedUnit = fc.oneof({ arbitrary: fc.constantFrom(...HOSTILE_ACCEPTED), weight: 3 }, { arbitrary: plain, weight: 12 });
const anyUnit = fc.oneof(
  { arbitrary: fc.constantFrom(...HOSTILE_ACCEPTED, ...HOSTILE_REFUSED), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), weight: 1 },
  { arbitrary: plain, weight: 6 },
);
const unit = anyUnit;
/** mostly text the rules accept (so encoders see many records), some with any code point, some at or beyond the limits */
const text = fc.oneof(
  { arbitrary: fc.string({ unit: acceptedUnit, maxLength: 12 }), weight: 24 },
  { arbitrary: fc.string({ unit: anyUnit, maxLength: 12 }), weight: 1 },
  {
    arbitrary: fc
      .tuple(
        fc.string({ unit: acceptedUnit, maxLength: 4 }),
        fc.constantFrom(20, 30, 31, 194, 195, 199, 200, 4096, 65_536, 70_000),
        fc.constantFrom('x', 'é', '😀', '|', '\n'),
      )
      .map(([start, length, fill]) => `${start}${fill.repeat(Math.ceil(length / fill.length))}`.slice(0, length)),
    weight: 1,
  },
);
/** text a required value holds: mostly starting with a letter or digit */
const requiredText = fc.oneof({ arbitrary: fc.tuple(plain, text).map(([first, rest]) => `${first}${rest}`), weight: 12 }, { arbitrary: text, weight: 1 });
/** identifiers (MRN, authority, sender): mostly plain */
const identifier = fc.oneof({ arbitrary: fc.stringMatching(/^[A-Z0-9][A-Z0-9-]{0,14}$/), weight: 12 }, { arbitrary: text, weight: 1 });
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });
const id = fc.oneof({ arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{1,20}$/), weight: 8 }, { arbitrary: text, weight: 1 });

// ---- odd times ----

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const instant = fc.oneof(
  {
    arbitrary: fc.date({ min: new Date('1890-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
    weight: 20,
  },
  {
    arbitrary: fc
      .tuple(
        fc.oneof(fc.integer({ min: 1, max: 9999 }), fc.constantFrom(1899, 1900, 2024, 2025)),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        fc.constantFrom('', '.5', '.123456789'),
        fc.constantFrom('Z', '+00:00', '-00:00', '+14:00', '-12:00', '+05:30', '-23:59', '+24:00', 'z', ''),
      )
      .map(([y, mo, d, h, mi, s, frac, zone]) => `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}${frac}${zone}`),
    weight: 3,
  },
  { arbitrary: fc.constantFrom('2025-06-01T12:05:00Z', '2025-06-01T12:05:01Z', '1900-01-01T00:00:00Z', '1900-01-01T00:30:00+01:00', '', 'now'), weight: 1 },
);
const birthDate = fc.oneof(
  instant.map((value) => value.slice(0, 10)),
  fc.constantFrom('2025-06-01', '2025-06-02', '1899-12-31', '1900-01-01', '2024-02-29', '2023-02-29', '0000-01-01'),
);

// ---- records ----

const personName = fc.record(
  { family: requiredText, given: optional(text), middle: optional(text), prefix: optional(text), suffix: optional(text) },
  { requiredKeys: ['family'] },
);
const coded = fc.record(
  { code: text, display: optional(text), system: optional(fc.oneof(text, fc.constantFrom('LN', 'I10', 'SCT', 'L'))) },
  { requiredKeys: ['code'] },
);
const clinician = fc.record({ id: optional(text), name: personName }, { requiredKeys: ['name'] });

const patientArb: fc.Arbitrary<Patient> = fc.record(
  {
    patientId: fc.constant(PATIENT_ID),
    mrn: identifier,
    assigningAuthority: identifier,
    name: personName,
    birthDate: optional(birthDate),
    sex: optional(fc.constantFrom('A', 'F', 'M', 'N', 'O', 'U' as const)),
    address: optional(
      fc.record(
        { line1: optional(text), line2: optional(text), city: optional(text), state: optional(text), postalCode: optional(text), country: optional(text) },
        { requiredKeys: [] },
      ),
    ),
    phone: optional(text),
    email: optional(text),
    maritalStatus: optional(coded),
    language: optional(coded),
    race: optional(coded),
    ethnicity: optional(coded),
    primaryCareProvider: optional(clinician),
    nextOfKin: optional(
      fc.array(fc.record({ name: personName, relationship: optional(coded), phone: optional(text) }, { requiredKeys: ['name'] }), { maxLength: 3 }),
    ),
  },
  { requiredKeys: ['patientId', 'mrn', 'assigningAuthority', 'name'] },
);

const encounterArb: fc.Arbitrary<Encounter> = fc.record(
  {
    patientId: fc.constant(PATIENT_ID),
    encounterId: id,
    patientClass: fc.constantFrom('B', 'C', 'E', 'I', 'N', 'O', 'P', 'R', 'U' as const),
    location: optional(text),
    attending: optional(clinician),
    admitAt: instant,
    dischargeAt: optional(instant),
    reason: optional(text),
    diagnoses: optional(fc.array(coded, { maxLength: 3 })),
    orders: optional(
      fc.array(
        fc.record(
          { orderId: id, code: coded, orderedAt: optional(instant), status: optional(text), orderingProvider: optional(clinician) },
          { requiredKeys: ['orderId', 'code'] },
        ),
        { maxLength: 3 },
      ),
    ),
  },
  { requiredKeys: ['patientId', 'encounterId', 'patientClass', 'admitAt'] },
);

const noteArb = (encounterId: fc.Arbitrary<string | undefined>): fc.Arbitrary<Note> =>
  fc
    .record({
      noteId: id,
      encounterId,
      author: clinician,
      createdAt: instant,
      text: fc.oneof(requiredText, fc.string({ unit: fc.oneof(unit, fc.constant('\r\n')), maxLength: 60 })),
    })
    .map((note) => ({ patientId: PATIENT_ID, ...note, ...(note.encounterId === undefined ? { encounterId: undefined } : {}) }))
    .map(({ encounterId: e, ...rest }) => (e === undefined ? rest : { ...rest, encounterId: e }));

const assessmentItem = fc.oneof(
  fc.record(
    {
      code: coded,
      kind: fc.constant('numeric' as const),
      value: fc.oneof({ arbitrary: fc.double(), weight: 3 }, { arbitrary: fc.integer(), weight: 3 }, { arbitrary: text, weight: 1 }),
      units: optional(text),
    },
    { requiredKeys: ['code', 'kind', 'value'] },
  ),
  fc.record({ code: coded, kind: fc.constant('text' as const), value: requiredText, units: optional(text) }, { requiredKeys: ['code', 'kind', 'value'] }),
  fc.record({ code: coded, kind: fc.constant('coded' as const), value: fc.oneof(coded, text) }, { requiredKeys: ['code', 'kind', 'value'] }),
);

const assessmentArb = (encounterId: fc.Arbitrary<string | undefined>): fc.Arbitrary<Assessment> =>
  fc
    .record(
      {
        assessmentId: id,
        encounterId,
        code: coded,
        performedAt: instant,
        performer: optional(clinician),
        items: fc.array(assessmentItem, { minLength: 1, maxLength: 4 }),
        total: optional(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double())),
        interpretation: optional(text),
      },
      { requiredKeys: ['assessmentId', 'code', 'performedAt', 'items'] },
    )
    .map(({ encounterId: e, ...rest }) => ({ patientId: PATIENT_ID, ...rest, ...(e === undefined ? {} : { encounterId: e }) }) as Assessment);

const labDataArb = fc.record({
  senderID: fc.oneof(fc.constant('demo-lab'), identifier),
  patientID: fc.oneof(fc.constant('demo-patient-1'), identifier),
  accessionNumber: fc.oneof(fc.stringMatching(/^[A-Z0-9-]{1,20}$/), text),
  status: fc.constantFrom('final', 'F', 'preliminary', 'corrected', 'C', 'amended', 'cancelled', 'X', 'P', 'unknown'),
  ResultedDateUTC: instant,
  results: fc.oneof(
    fc.array(
      fc.record(
        {
          testName: requiredText,
          result: fc.oneof(text, fc.constantFrom('98', '<5', '1:128', '5.40', '-0', '1e5', '')),
          units: optional(text),
          referenceRange: optional(text),
          code: optional(fc.oneof(fc.constantFrom('2345-7', '718-7'), text)),
          codeSystem: optional(fc.constantFrom('LN', 'L', '99LAB')),
        },
        { requiredKeys: ['testName', 'result'] },
      ),
      { minLength: 1, maxLength: 4 },
    ),
    fc.record({ testName: requiredText, result: text }),
  ),
  reports: optional(
    fc.array(
      fc.record({
        source: fc.constantFrom('base64', 'BASE64', 'text', 'url'),
        type: fc.oneof(fc.constantFrom('application/pdf', 'text/plain', 'image/png', 'x'), text),
        name: requiredText,
        data: fc.oneof(fc.constantFrom('SGVsbG8=', 'AAAA', 'not base64!'), text),
      }),
      { maxLength: 2 },
    ),
  ),
});

// ---- a known-good patient, for records whose own patient was refused ----

const GOOD_PATIENT: Patient = { patientId: PATIENT_ID, mrn: 'MRN-1', assigningAuthority: 'DEMO-HOSP', name: { family: 'Lee', given: 'Sam' } };

const tally = { cases: 0, accepted: 0 };
function accepted(problems: unknown[]): boolean {
  tally.cases += 1;
  if (problems.length > 0) return false;
  tally.accepted += 1;
  return true;
}
/** per property: a fair share of its records is accepted and exported (the run is not vacuous) */
function expectExercised(before: { cases: number; accepted: number }): void {
  expect(tally.cases - before.cases).toBe(RUNS);
  expect((tally.accepted - before.accepted) / RUNS).toBeGreaterThan(0.15);
}

/** Every export of a patient with these records; throws what an encoder throws. */
function exportAll(patient: Patient, records: ChartRecord[], labResults: LabResultSummary[] = []): void {
  encodePatientAdtMessage({ header, patient });
  for (const style of ['batch', 'oru'] as const) encodePatientSummary({ header, patient, records, labResults, style });
  JSON.stringify(patientResource(patient));
  const encounters = records.flatMap((r) => (r.kind === 'encounter' ? [r.record] : []));
  const encounterOf = (encounterId: string | undefined) => encounters.find((e) => e.encounterId === encounterId);
  for (const record of records) {
    if (record.kind === 'encounter') {
      for (const style of ['adt', 'oru'] as const) encodeEncounterMessage({ header, patient, encounter: record.record, style });
      JSON.stringify(encounterResource(record.record));
    } else if (record.kind === 'note') {
      for (const documentType of ['PN', 'DS'])
        encodeNoteMessage({ header, patient, note: record.record, encounter: encounterOf(record.record.encounterId), documentType });
      JSON.stringify(documentReferenceResource(record.record));
    } else {
      encodeAssessmentMessage({ header, patient, assessment: record.record, encounter: encounterOf(record.record.encounterId) });
      JSON.stringify(assessmentObservation(record.record));
    }
  }
}

const patientOrGood = (patient: Patient) => (checkPatientValues(patient, NOW).length === 0 ? patient : GOOD_PATIENT);

describe('export totality: a record the record rules accept is written by every export', () => {
  afterAll(() => {
    // not vacuous: a fair share of the generated records is accepted and exported
    expect(tally.cases).toBeGreaterThanOrEqual(2000);
    expect(tally.accepted / tally.cases).toBeGreaterThan(0.3);
  });

  it('patients (ADT, summary batch and ORU, FHIR Patient)', () => {
    const before = { ...tally };
    fc.assert(
      fc.property(patientArb, (patient) => {
        if (!accepted(checkPatientValues(patient, NOW))) return;
        exportAll(patient, []);
      }),
      { seed: 2611261, numRuns: RUNS },
    );
    expectExercised(before);
  });

  it('encounters (ADT^A04 and ORU styles, in the summary, FHIR Encounter)', () => {
    const before = { ...tally };
    fc.assert(
      fc.property(patientArb, encounterArb, (patient, encounter) => {
        if (!accepted(checkEncounterValues(encounter, NOW))) return;
        exportAll(patientOrGood(patient), [{ kind: 'encounter', at: encounter.admitAt, record: encounter }]);
      }),
      { seed: 2611262, numRuns: RUNS },
    );
    expectExercised(before);
  });

  it('notes (MDM^T02 with and without their encounter, in the summary, FHIR DocumentReference)', () => {
    const before = { ...tally };
    fc.assert(
      fc.property(
        patientArb,
        fc
          .option(encounterArb, { nil: undefined })
          .chain((encounter) =>
            noteArb(encounter ? fc.constantFrom(encounter.encounterId, undefined) : fc.constant(undefined)).map((note) => ({ encounter, note })),
          ),
        (patient, { encounter, note }) => {
          if (!accepted(checkNoteValues(note, NOW))) return;
          const withEncounter = encounter && note.encounterId && checkEncounterValues(encounter, NOW).length === 0;
          const records: ChartRecord[] = [{ kind: 'note', at: note.createdAt, record: note }];
          if (withEncounter) records.push({ kind: 'encounter', at: encounter.admitAt, record: encounter });
          else delete note.encounterId;
          exportAll(patientOrGood(patient), records);
        },
      ),
      { seed: 2611263, numRuns: RUNS },
    );
    expectExercised(before);
  });

  it('assessments (ORU^R01, in the summary, FHIR Observation)', () => {
    const before = { ...tally };
    fc.assert(
      fc.property(
        patientArb,
        fc.option(encounterArb, { nil: undefined }).chain((encounter) =>
          assessmentArb(encounter ? fc.constantFrom(encounter.encounterId, undefined) : fc.constant(undefined)).map((assessment) => ({
            encounter,
            assessment,
          })),
        ),
        (patient, { encounter, assessment }) => {
          if (!accepted(checkAssessmentValues(assessment, NOW))) return;
          const withEncounter = encounter && assessment.encounterId && checkEncounterValues(encounter, NOW).length === 0;
          const records: ChartRecord[] = [{ kind: 'assessment', at: assessment.performedAt, record: assessment }];
          if (withEncounter) records.push({ kind: 'encounter', at: encounter.admitAt, record: encounter });
          else delete assessment.encounterId;
          exportAll(patientOrGood(patient), records);
        },
      ),
      { seed: 2611264, numRuns: RUNS },
    );
    expectExercised(before);
  });

  it('lab results (ORU^R01 matched and unmatched, in the summary, FHIR DiagnosticReport)', () => {
    const before = { ...tally };
    fc.assert(
      fc.property(patientArb, labDataArb, (patient, data) => {
        const body = { data: JSON.parse(JSON.stringify(data)) as typeof data };
        let submission: ReturnType<typeof acceptLabResult>;
        try {
          submission = acceptLabResult(body, NOW);
        } catch (error) {
          if (!(error instanceof ValidationFailedError)) throw error;
          // a refusal of the record rules is also a refusal of acceptLabResult
          accepted(['refused']);
          return;
        }
        expect(checkLabResultValues(body.data, NOW)).toEqual([]);
        accepted([]);
        const summary: LabResultSummary = {
          resultId: 'result-1',
          accessionNumber: body.data.accessionNumber,
          status: submission.status,
          resultedAt: body.data.ResultedDateUTC,
          results: submission.results.map((r) => ({
            testName: r.testName,
            result: r.result,
            ...(typeof r.units === 'string' ? { units: r.units } : {}),
            ...(typeof r.referenceRange === 'string' ? { referenceRange: r.referenceRange } : {}),
            ...(typeof r.code === 'string' ? { code: r.code } : {}),
            ...(typeof r.codeSystem === 'string' ? { codeSystem: r.codeSystem } : {}),
          })),
        };
        const reports = (body.data.reports ?? []).map((r) => ({ name: r.name, type: r.type, source: r.source, data: r.data }));
        const chartPatient = patientOrGood(patient);
        encodeLabResultMessage({ header, result: summary, patient: chartPatient, reports });
        encodeLabResultMessage({ header, result: summary, labPatient: { patientId: body.data.patientID, senderId: body.data.senderID }, reports });
        exportAll(chartPatient, [], [summary]);
        JSON.stringify(labDiagnosticReport(PATIENT_ID, summary));
      }),
      { seed: 2611265, numRuns: RUNS },
    );
    expectExercised(before);
  });
});

// ---- generated intake messages (issue 26 item 6): what HL7 intake accepts, every export can write ----

/** raw HL7 field text: escape sequences (\X00\, \X0D\, \.br\ ...), delimiters inside components, any code point */
const RAW_PIECES = [
  '\\X00\\', '\\X0D\\', '\\X0A\\', '\\X1B\\', '\\X7F\\', '\\XC285\\', '\\.br\\', '\\F\\', '\\S\\', '\\T\\', '\\R\\', '\\E\\', '\\H\\', '\\N\\',
  '^', '&', '~', '😀', 'é', '\u2028', '\u0085', '\u0000', '\t', '""', ' ',
]; // prettier-ignore
const rawUnit = fc.oneof({ arbitrary: fc.constantFrom(...RAW_PIECES), weight: 1 }, { arbitrary: plain, weight: 30 });
const rawText = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        plain.filter((c) => c !== ' '),
        fc.string({ unit: rawUnit, maxLength: 10 }),
      )
      .map(([first, rest]) => first + rest),
    weight: 20,
  },
  { arbitrary: fc.string({ unit: rawUnit, minLength: 1, maxLength: 10 }), weight: 3 },
  { arbitrary: fc.constant(''), weight: 1 },
);
const rawTs = fc.oneof(
  {
    arbitrary: fc
      .date({ min: new Date('1950-01-01'), max: new Date('2025-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + '+0000'),
    weight: 6,
  },
  fc.constantFrom('20240301093000+0000', '20240301', '2024030109', '99991231235959-1400', '18991231', '19000101000000+1400', '20240230', '202403011260', ''),
  fc
    .date({ min: new Date('1850-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + '+0000'),
);
const pidSegment = fc
  .record({
    mrn: rawText,
    authority: rawText,
    family: rawText,
    given: rawText,
    dob: rawTs,
    sex: fc.constantFrom('F', 'M', 'U', 'X', ''),
    street: rawText,
    email: rawText,
  })
  .map(
    (p) => `PID|1||${p.mrn}^^^${p.authority}^MR||${p.family}^${p.given}||${p.dob.slice(0, 8)}|${p.sex}|||${p.street}^^City^ST^12345||^NET^Internet^${p.email}`,
  );
const msh = (type: string, id: number) => `MSH|^~\\&|EHR|GEN-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||${type}|GEN${id}|P|2.5.1`;

const adtMessage = fc
  .tuple(pidSegment, fc.array(fc.tuple(rawText, rawText), { maxLength: 3 }), rawText)
  .map(([pid, kin, pcp]) =>
    [msh('ADT^A08^ADT_A01', 1), 'EVN|A08', pid, `PD1||||1^${pcp}^Pat`, ...kin.map(([f, g], i) => `NK1|${i + 1}|${f}^${g}|SPO^Spouse^HL70063`)].join('\r'),
  );
const mdmMessage = fc
  .tuple(pidSegment, rawText, rawText, rawTs, fc.constantFrom('AU', 'DO', 'IP', 'LA', 'ZZ', ''), rawText, fc.array(rawText, { minLength: 1, maxLength: 3 }))
  .map(([pid, docNumber, author, ts, status, authenticator, lines]) =>
    [
      msh('MDM^T02^MDM_T02', 2),
      'EVN|T02',
      pid,
      'PV1|1|O',
      `TXA|1|PN|TEXT|${ts}|1^${author}^Doc|${ts}|||1^${author}^Doc|||${docNumber}|||||${status}|||||1^${authenticator}^Auth^^^^^^^^^^^^${ts}`,
      ...lines.map((line, i) => `OBX|${i + 1}|TX|NOTE^Note^L||${line}||||||F`),
    ].join('\r'),
  );
const oruMessage = fc
  .tuple(
    pidSegment,
    rawText,
    rawTs,
    fc.constantFrom('F', 'P', 'C', 'X', 'Q'),
    fc.array(fc.tuple(fc.constantFrom('NM', 'ST', 'TX', 'CE', 'SN', 'FT'), rawText, rawText, rawText), { minLength: 1, maxLength: 4 }),
  )
  .map(([pid, accession, ts, status, observations]) =>
    [
      msh('ORU^R01^ORU_R01', 3),
      pid,
      `OBR|1|ORD1|${accession}|GLU^Glucose^L|||${ts}|||||||||||||||${ts}|||${status}`,
      ...observations.map(([type, name, value, units], i) => `OBX|${i + 1}|${type}|${i}^${name}^L||${value}|${units}|||||F`),
      'NTE|1||a comment',
    ].join('\r'),
  );

const intakeContext = {
  principal: { keyId: 'k', partnerId: 'gen-partner', scopes: [], allowedSenderIds: ['GEN-LIS'] },
  requestId: 'r',
  now: NOW,
  ownApplication: 'INTEROP',
};
const intakeTally = { messages: 0, accepted: 0 };

/** Parses a generated message; undefined when intake would answer AR (it never gets to the mappings). */
function parsedOrRefused(text: string): ParsedMessage | undefined {
  intakeTally.messages += 1;
  try {
    return parseHl7Message(`${text}\r`);
  } catch (error) {
    if (error instanceof Hl7ParseError) return undefined;
    throw error;
  }
}
/** Runs a mapping; undefined when intake answers AE/AR for it (nothing stored). */
function mappedOrRefused<T>(map: () => T): T | undefined {
  try {
    const value = map();
    intakeTally.accepted += 1;
    return value;
  } catch (error) {
    if (error instanceof AckRejection || error instanceof ValidationFailedError) return undefined;
    throw error;
  }
}

describe('export totality of intake: a generated HL7 message intake accepts is written by every export', () => {
  const INTAKE_RUNS = 700;
  afterAll(() => {
    console.log(`intake export totality: ${intakeTally.messages} generated messages, ${intakeTally.accepted} records accepted and exported, 0 throws`);
    expect(intakeTally.messages).toBeGreaterThanOrEqual(2000);
    expect(intakeTally.accepted / intakeTally.messages).toBeGreaterThan(0.2);
  });

  it('ADT: the partner demographics it stores are written by every patient export', () => {
    fc.assert(
      fc.property(adtMessage, (text) => {
        const message = parsedOrRefused(text);
        if (!message) return;
        const patient = mappedOrRefused(() => {
          const mapped = intakeMappings.patientFrom(message, { patientId: PATIENT_ID, mrn: 'X', assigningAuthority: 'GEN', name: { family: 'Placeholder' } });
          const { assigningAuthority, ...rest } = mapped;
          const problems = checkPatientValues({ ...rest, ...(assigningAuthority ? { assigningAuthority } : {}) }, NOW);
          if (problems.length > 0) throw new ValidationFailedError('refused', []);
          return mapped;
        });
        if (patient) exportAll(patient, []);
      }),
      { seed: 2611266, numRuns: INTAKE_RUNS },
    );
  });

  it('MDM: the document it stores is written by the note export, the summary and FHIR', () => {
    fc.assert(
      fc.property(mdmMessage, (text) => {
        const message = parsedOrRefused(text);
        if (!message) return;
        const note = mappedOrRefused(() => intakeMappings.noteFrom(message, intakeContext));
        if (note) exportAll(GOOD_PATIENT, [{ kind: 'note', at: note.createdAt, record: { ...note, patientId: PATIENT_ID } }]);
      }),
      { seed: 2611267, numRuns: INTAKE_RUNS },
    );
  });

  it('ORU: the lab results it stores are written by the lab result export, the summary and FHIR', () => {
    fc.assert(
      fc.property(oruMessage, (text) => {
        const message = parsedOrRefused(text);
        if (!message) return;
        for (const group of intakeMappings.observationGroups(message)) {
          const submission = mappedOrRefused(() => {
            const body = intakeMappings.labBody(group, 'GEN-LIS', PATIENT_ID, message);
            return { body: body.data as Record<string, unknown>, accepted: acceptLabResult(body, NOW) };
          });
          if (!submission) continue;
          const summary: LabResultSummary = {
            resultId: 'result-1',
            accessionNumber: String(submission.body.accessionNumber),
            status: submission.accepted.status,
            resultedAt: String(submission.body.ResultedDateUTC),
            results: submission.accepted.results.map((r) => ({
              testName: r.testName,
              result: r.result,
              ...(typeof r.units === 'string' ? { units: r.units } : {}),
            })),
          };
          encodeLabResultMessage({ header, result: summary, patient: GOOD_PATIENT, reports: [] });
          exportAll(GOOD_PATIENT, [], [summary]);
          JSON.stringify(labDiagnosticReport(PATIENT_ID, summary));
        }
      }),
      { seed: 2611268, numRuns: INTAKE_RUNS },
    );
  });
});
