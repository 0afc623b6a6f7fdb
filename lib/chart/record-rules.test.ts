import {
  checkAssessmentValues,
  checkEncounterValues,
  checkLabResultValues,
  checkNoteValues,
  checkPatientValues,
  pointerOfPath,
  RECORD_LIMITS,
  RECORD_RULE_MESSAGES,
} from './record-rules';
import type { Assessment, Encounter, Note, Patient } from './types';

const now = new Date('2025-06-01T12:00:00Z');

const patient: Patient = {
  patientId: 'p-1',
  mrn: 'MRN-1',
  assigningAuthority: 'DEMO-HOSP',
  name: { family: 'Núñez', given: 'Zoë' },
  birthDate: '1980-02-29',
  sex: 'F',
  nextOfKin: [{ name: { family: "O'Brien" }, phone: '+1 555 0100' }],
};
const note: Note = {
  patientId: 'p-1',
  noteId: 'n-1',
  author: { id: 'dr 1', name: { family: 'Lee' } },
  createdAt: '2025-06-01T12:04:00+00:00',
  text: 'Line one\r\n\tindented | ^ ~ \\ &\nline 3',
};
const encounter: Encounter = {
  patientId: 'p-1',
  encounterId: 'e-1',
  patientClass: 'O',
  admitAt: '1900-01-01T00:00:00Z',
  dischargeAt: '2025-06-01T13:00:00+02:00',
  diagnoses: [{ code: 'E11.9', system: 'I10' }],
  orders: [{ orderId: 'o-1', code: { code: '85025' } }],
};
const assessment: Assessment = {
  patientId: 'p-1',
  assessmentId: 'a-1',
  code: { code: '44249-1', system: 'LN' },
  performedAt: '2025-05-01T10:00:00Z',
  items: [
    { code: { code: 'q1' }, kind: 'numeric', value: 2 },
    { code: { code: 'q2' }, kind: 'text', value: 'Sleeps\nbadly' },
    { code: { code: 'q3' }, kind: 'coded', value: { code: 'LA6568-5' } },
  ],
  total: 2,
};
const labData = {
  senderID: 'demo-lab',
  patientID: 'demo-patient-1',
  accessionNumber: 'ACC-1',
  status: 'final',
  ResultedDateUTC: '2025-06-01T12:00:00Z',
  results: [{ testName: 'Glucose', result: '98\nfasting', units: 'mg/dL', referenceRange: '70-99' }],
  reports: [{ source: 'text', type: 'text/plain', name: 'Report 1', data: 'a\r\nb' }],
};

const paths = (problems: Array<{ path: string }>) => problems.map((p) => p.path);

describe('record rules accept ordinary records', () => {
  it.each([
    ['patient', () => checkPatientValues(patient, now)],
    ['note', () => checkNoteValues(note, now)],
    ['encounter', () => checkEncounterValues(encounter, now)],
    ['assessment', () => checkAssessmentValues(assessment, now)],
    ['lab result', () => checkLabResultValues(labData, now)],
    ['partial patient', () => checkPatientValues({ phone: '555' }, now)],
  ])('%s', (_what, check) => {
    expect(check()).toEqual([]);
  });
});

describe('names and text', () => {
  it('a family name that decodes to NUL (ADT \\X00\\) is refused; so is one without a letter or digit', () => {
    expect(checkPatientValues({ ...patient, name: { family: '\u0000' } }, now)).toEqual([
      { path: 'name.family', message: RECORD_RULE_MESSAGES.controlOneLine },
    ]);
    expect(checkPatientValues({ ...patient, name: { family: ' .-' } }, now)).toEqual([{ path: 'name.family', message: RECORD_RULE_MESSAGES.printable }]);
    expect(checkPatientValues({ ...patient, name: { family: '' } }, now)).toEqual([{ path: 'name.family', message: RECORD_RULE_MESSAGES.printable }]);
    expect(paths(checkPatientValues({ ...patient, name: {} as Patient['name'] }, now))).toEqual(['name.family']);
  });

  it('C0 and C1 controls, line breaks in one-line values and unpaired surrogates are refused', () => {
    for (const bad of ['a\u0007', 'a\u001b', 'a\u007f', 'a\u0085', 'a\u009f', 'a\nb', 'a\tb', 'a\r']) {
      expect(paths(checkPatientValues({ name: { family: 'Lee', given: bad } }, now))).toEqual(['name.given']);
    }
    expect(checkPatientValues({ name: { family: 'Lee\uD800' } }, now)).toEqual([{ path: 'name.family', message: RECORD_RULE_MESSAGES.surrogate }]);
    expect(checkPatientValues({ name: { family: 'Lee 😀' } }, now)).toEqual([]);
  });

  it('note text may hold CR, LF and TAB but no other control, and must hold a letter or digit', () => {
    expect(checkNoteValues({ ...note, text: 'a\u0000b' }, now)).toEqual([{ path: 'text', message: RECORD_RULE_MESSAGES.controlMultiLine }]);
    expect(checkNoteValues({ ...note, text: 'a\u000bb' }, now)).toEqual([{ path: 'text', message: RECORD_RULE_MESSAGES.controlMultiLine }]);
    expect(checkNoteValues({ ...note, text: '\r\n\t ' }, now)).toEqual([{ path: 'text', message: RECORD_RULE_MESSAGES.printable }]);
    expect(checkNoteValues({ ...note, text: 'x'.repeat(RECORD_LIMITS.noteText) }, now)).toEqual([]);
    expect(paths(checkNoteValues({ ...note, text: 'x'.repeat(RECORD_LIMITS.noteText + 1) }, now))).toEqual(['text']);
  });

  it('lengths as the HL7 fields allow', () => {
    expect(checkPatientValues({ name: { family: 'x'.repeat(194), given: 'y'.repeat(30) } }, now)).toEqual([]);
    expect(paths(checkPatientValues({ name: { family: 'x'.repeat(195), given: 'y'.repeat(31), prefix: 'z'.repeat(21) } }, now))).toEqual([
      'name.family',
      'name.given',
      'name.prefix',
    ]);
  });

  it('messages name the rule, never the value', () => {
    const secret = 'Vastergaard\u0000';
    const problems = [
      ...checkPatientValues({ name: { family: secret } }, now),
      ...checkNoteValues({ text: secret.repeat(10_000) }, now),
      ...checkLabResultValues({ results: [{ testName: secret, result: secret }] }, now),
    ];
    expect(problems.length).toBeGreaterThan(0);
    for (const p of problems) expect(p.message).not.toContain('Vastergaard');
  });

  it('MRNs hold no HL7 delimiters; ids follow CHART_ID_PATTERN', () => {
    expect(paths(checkPatientValues({ mrn: 'A^B', patientId: 'p 1' }, now))).toEqual(['patientId', 'mrn']);
    expect(paths(checkNoteValues({ ...note, noteId: 'x'.repeat(129) }, now))).toEqual(['noteId']);
  });

  it('MRNs and assigning authorities are refused with white space at either end (PID-3 writes them as stored)', () => {
    for (const mrn of [' MRN-1', 'MRN-1 ', 'MRN-1\u00a0', '\u2003MRN-1']) {
      expect(checkPatientValues({ mrn }, now)).toEqual([{ path: 'mrn', message: RECORD_RULE_MESSAGES.untrimmed }]);
    }
    expect(checkPatientValues({ assigningAuthority: 'DEMO-HOSP ' }, now)).toEqual([{ path: 'assigningAuthority', message: RECORD_RULE_MESSAGES.untrimmed }]);
    expect(checkPatientValues({ mrn: 'MRN 1', assigningAuthority: 'DEMO HOSP' }, now)).toEqual([]);
  });
});

describe('times and dates', () => {
  it('clinical times lie between 1900-01-01 and now + 5 minutes', () => {
    expect(checkNoteValues({ createdAt: '2025-06-01T12:05:00Z' }, now)).toEqual([]);
    expect(checkNoteValues({ createdAt: '2025-06-01T12:05:01Z' }, now)).toEqual([{ path: 'createdAt', message: RECORD_RULE_MESSAGES.future }]);
    expect(checkNoteValues({ createdAt: '1899-12-31T23:59:59Z' }, now)).toEqual([{ path: 'createdAt', message: RECORD_RULE_MESSAGES.tooEarly }]);
    // in 1900 at its offset, but 1899 in UTC
    expect(checkNoteValues({ createdAt: '1900-01-01T00:30:00+01:00' }, now)).toEqual([{ path: 'createdAt', message: RECORD_RULE_MESSAGES.tooEarly }]);
    for (const bad of ['2025-02-30T00:00:00Z', '2024-12-31T23:59:60Z', '2025-01-01T00:00Z', '2025-01-01', 'yesterday']) {
      expect(checkNoteValues({ createdAt: bad }, now)).toEqual([{ path: 'createdAt', message: RECORD_RULE_MESSAGES.dateTime }]);
    }
    expect(
      paths(checkEncounterValues({ admitAt: '2030-01-01T00:00:00Z', orders: [{ orderId: 'o', code: { code: 'c' }, orderedAt: '1800-01-01T00:00:00Z' }] }, now)),
    ).toEqual(['admitAt', 'orders.0.orderedAt']);
    expect(paths(checkAssessmentValues({ performedAt: '2025-06-02T00:00:00Z' }, now))).toEqual(['performedAt']);
  });

  it('birth dates: real, 1900 or later, not in the future', () => {
    expect(checkPatientValues({ birthDate: '2025-06-01' }, now)).toEqual([]);
    expect(checkPatientValues({ birthDate: '2025-06-02' }, now)).toEqual([{ path: 'birthDate', message: RECORD_RULE_MESSAGES.futureDate }]);
    expect(checkPatientValues({ birthDate: '1899-12-31' }, now)).toEqual([{ path: 'birthDate', message: RECORD_RULE_MESSAGES.tooEarly }]);
    expect(checkPatientValues({ birthDate: '1981-02-29' }, now)).toEqual([{ path: 'birthDate', message: RECORD_RULE_MESSAGES.date }]);
  });
});

describe('records and items', () => {
  it('a whole patient record is at most 64 KiB as JSON', () => {
    const kin = Array.from({ length: 400 }, () => ({ name: { family: 'x'.repeat(190) } }));
    expect(checkPatientValues({ ...patient, nextOfKin: kin }, now)).toEqual([
      { path: '', message: `the record must be at most ${RECORD_LIMITS.patientRecordBytes} bytes as JSON` },
    ]);
  });

  it('coded values need a code with a letter or digit; assessment items their kind', () => {
    expect(paths(checkEncounterValues({ diagnoses: [{ code: '\u0000' }, { code: 'E1' }] }, now))).toEqual(['diagnoses.0.code']);
    expect(
      paths(
        checkAssessmentValues(
          {
            items: [
              { code: { code: 'a' }, kind: 'numeric', value: Number.NaN },
              { code: { code: 'b' }, kind: 'text', value: '' },
              { code: { code: 'c' }, kind: 'coded', value: { code: '' } },
              { code: { code: 'd' }, kind: 'other' as 'text', value: 'x' },
            ],
            total: Number.POSITIVE_INFINITY,
          },
          now,
        ),
      ),
    ).toEqual(['items.0.value', 'items.1.value', 'items.2.value.code', 'items.3.kind', 'total']);
  });

  it('lab result values: test names printable, one-line units, multi-line results, time window', () => {
    const problems = checkLabResultValues(
      {
        ...labData,
        ResultedDateUTC: '2025-06-01T12:06:00Z',
        results: [
          { testName: '\u0000', result: 'ok' },
          { testName: 'Na', result: 'a\u0000', units: 'mmol\nL' },
        ],
        reports: [{ source: 'TEXT', type: 'text/plain', name: '---', data: 'x\u0001' }],
      },
      now,
    );
    expect(paths(problems)).toEqual(['ResultedDateUTC', 'results.0.testName', 'results.1.result', 'results.1.units', 'reports.0.name', 'reports.0.data']);
    expect(checkLabResultValues({ ...labData, results: { testName: '%', result: '' } }, now)).toEqual([
      { path: 'results.testName', message: RECORD_RULE_MESSAGES.printable },
    ]);
    expect(checkLabResultValues('not an object', now)).toEqual([]);
  });

  it('paths become JSON pointers', () => {
    expect(pointerOfPath('results.0.testName')).toBe('/results/0/testName');
    expect(pointerOfPath('')).toBe('');
  });
});
