/**
 * fast-check arbitraries of chart data whose text fields are hostile: HL7 delimiters, escape-looking
 * text, CR, LF, CRLF, TAB, other control characters, unpaired surrogates, emoji (with ZWJ), combining
 * marks, non-ASCII letters, and the Unicode line separators (NEL, U+2028) that escaping treats as line breaks.
 */
import fc from 'fast-check';
import type {
  Address,
  Assessment,
  AssessmentItem,
  Clinician,
  CodedValue,
  Encounter,
  EncounterOrder,
  NextOfKin,
  Note,
  Patient,
  PersonName,
} from '../../lib/chart/types';
import type { LabResultSummary, MessageHeaderContext } from '../../lib/hl7';
import { expectedReadBack } from './round-trip';

const HOSTILE_UNITS = [
  '|',
  '^',
  '~',
  '\\',
  '&',
  '\r',
  '\n',
  '\r\n',
  '\t',
  ' ',
  '\\F\\',
  '\\S\\',
  '\\E\\',
  '\\.br\\',
  '\\X0D\\',
  '\\',
  '😀',
  '👩‍⚕️',
  'e\u0301',
  'a\u0308',
  'é',
  'ß',
  'Ω',
  '中文',
  'Zoë',
  'ﬁ',
  '\u0000',
  '\u0007',
  '\u001b',
  '\u007f',
  '\uD800',
  '\uDC00',
  '\u0085',
  '\u2028',
  '\u00A0',
  '\uFEFF',
];

const unit = fc.oneof(
  { arbitrary: fc.constantFrom(...HOSTILE_UNITS), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), weight: 4 },
);

/** Any text, possibly empty. */
export const hostileText = fc.string({ unit, maxLength: 10 });

/** Text that is not empty once encoded (for values HL7 requires). */
export const requiredText = fc.string({ unit, minLength: 1, maxLength: 10 }).filter((text) => expectedReadBack(text) !== '');

export function optional<T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.option(arbitrary, { nil: undefined, freq: 3 });
}

/** An instant in UTC as ISO 8601 with Z (a lab's resultedAt; chart times: {@link chartDateTime}). */
export const isoDateTime = fc
  .date({ min: new Date('1950-01-01T00:00:00Z'), max: new Date('2090-12-31T23:59:59Z'), noInvalidDate: true })
  .map((date) => date.toISOString());

export const isoDate = isoDateTime.map((dateTime) => dateTime.slice(0, 10));

/** UTC offsets of chart times: Z, whole and half hours, both ends of the range (minutes). */
const CHART_OFFSETS = [0, 0, -480, -300, 60, 330, 345, 840, -720];

/**
 * A chart time as the chart stores it (admitAt, createdAt...): seconds, sometimes a fraction, and `Z` or
 * an offset `±HH:MM`, the wall time in that offset. The exports write it as stored (offset and precision kept).
 */
export const chartDateTime = fc
  .record({
    date: fc.date({ min: new Date('1950-01-02T00:00:00Z'), max: new Date('2090-12-30T23:59:59Z'), noInvalidDate: true }),
    offsetMinutes: fc.constantFrom(...CHART_OFFSETS),
    fraction: fc.constantFrom('', '', '', '.5', '.123', '.000'),
  })
  .map(({ date, offsetMinutes, fraction }) => {
    const wall = new Date(Math.floor(date.getTime() / 1000) * 1000 + offsetMinutes * 60_000).toISOString().slice(0, 19);
    const size = Math.abs(offsetMinutes);
    const zone =
      offsetMinutes === 0 ? 'Z' : `${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(size / 60)).padStart(2, '0')}:${String(size % 60).padStart(2, '0')}`;
    return `${wall}${fraction}${zone}`;
  });

/** TS of a {@link chartDateTime} as written, computed independently of the encoder: `yyyyMMddHHmmss[.f]` and `±HHMM` (`Z` -> `+0000`). */
export function expectedChartTimestamp(chartTime: string): string {
  const zone = chartTime.endsWith('Z') ? '+0000' : chartTime.slice(-6).replace(':', '');
  const fraction = chartTime.charAt(19) === '.' ? chartTime.slice(19, chartTime.endsWith('Z') ? -1 : -6) : '';
  return `${chartTime.slice(0, 19).replace(/[-T:]/g, '')}${fraction}${zone}`;
}

/** yyyyMMddHHmmss of a `...Z` ISO date-time, computed independently of the encoder. */
export function expectedTimestamp(isoUtc: string): string {
  return `${isoUtc.slice(0, 19).replace(/[-T:]/g, '')}+0000`;
}

export const codingSystem = optional(fc.constantFrom('LN', 'I10', 'SCT', 'L', 'HL70002', 'HL70063', 'UCUM', '99ABC'));

export const codedValue: fc.Arbitrary<CodedValue> = fc.record(
  { code: requiredText, display: optional(hostileText), system: codingSystem },
  { requiredKeys: ['code'] },
);

export const personName: fc.Arbitrary<PersonName> = fc.record(
  { family: requiredText, given: optional(hostileText), middle: optional(hostileText), prefix: optional(hostileText), suffix: optional(hostileText) },
  { requiredKeys: ['family'] },
);

export const clinician: fc.Arbitrary<Clinician> = fc.record({ id: optional(hostileText), name: personName }, { requiredKeys: ['name'] });

export const address: fc.Arbitrary<Address> = fc.record(
  {
    line1: optional(hostileText),
    line2: optional(hostileText),
    city: optional(hostileText),
    state: optional(hostileText),
    postalCode: optional(hostileText),
    country: optional(hostileText),
  },
  { requiredKeys: [] },
);

export const nextOfKin: fc.Arbitrary<NextOfKin> = fc.record(
  { name: personName, relationship: optional(codedValue), phone: optional(hostileText) },
  { requiredKeys: ['name'] },
);

export const PATIENT_ID = 'patient-under-test';

export const patient: fc.Arbitrary<Patient> = fc.record(
  {
    patientId: fc.constant(PATIENT_ID),
    mrn: requiredText,
    assigningAuthority: hostileText,
    name: personName,
    birthDate: optional(isoDate),
    sex: optional(fc.constantFrom('A', 'F', 'M', 'N', 'O', 'U' as const)),
    address: optional(address),
    phone: optional(hostileText),
    email: optional(hostileText),
    maritalStatus: optional(codedValue),
    language: optional(codedValue),
    race: optional(codedValue),
    ethnicity: optional(codedValue),
    primaryCareProvider: optional(clinician),
    nextOfKin: optional(fc.array(nextOfKin, { maxLength: 3 })),
  },
  { requiredKeys: ['patientId', 'mrn', 'assigningAuthority', 'name'] },
);

export const header: fc.Arbitrary<MessageHeaderContext> = fc.record({
  sendingApplication: hostileText,
  sendingFacility: hostileText,
  receivingApplication: hostileText,
  receivingFacility: hostileText,
  timestamp: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }),
  controlId: fc.stringMatching(/^[A-Za-z0-9.-]{1,20}$/),
  // namespaces come from configuration (plain HD ids), not from data
  identifierNamespaces: fc.record({
    entity: fc.constantFrom('INTEROP', 'RIVERSIDE_CLINIC_LONG'),
    clinician: fc.constantFrom('NPI', 'INTEROP'),
    visit: fc.constantFrom('VISITS', 'INTEROP'),
  }),
});

export const encounterOrder: fc.Arbitrary<EncounterOrder> = fc.record(
  {
    orderId: requiredText,
    code: codedValue,
    orderedAt: optional(chartDateTime),
    status: optional(fc.oneof(hostileText, fc.constantFrom('completed', 'scheduled', 'CA', 'in progress'))),
    orderingProvider: optional(clinician),
  },
  { requiredKeys: ['orderId', 'code'] },
);

export const encounter: fc.Arbitrary<Encounter> = fc.record(
  {
    patientId: fc.constant(PATIENT_ID),
    encounterId: requiredText,
    patientClass: fc.constantFrom('B', 'C', 'E', 'I', 'N', 'O', 'P', 'R', 'U' as const),
    location: optional(hostileText),
    attending: optional(clinician),
    admitAt: chartDateTime,
    dischargeAt: optional(chartDateTime),
    reason: optional(hostileText),
    diagnoses: optional(fc.array(codedValue, { maxLength: 3 })),
    orders: optional(fc.array(encounterOrder, { maxLength: 3 })),
  },
  { requiredKeys: ['patientId', 'encounterId', 'patientClass', 'admitAt'] },
);

/** Note text: longer, with many line breaks. */
const noteText = fc.string({ unit: fc.oneof(unit, fc.constantFrom('\r\n', '\n', '\r', '\n\n')), maxLength: 40 });

export const note: fc.Arbitrary<Note> = fc.record(
  { patientId: fc.constant(PATIENT_ID), noteId: requiredText, author: clinician, createdAt: chartDateTime, text: noteText },
  { requiredKeys: ['patientId', 'noteId', 'author', 'createdAt', 'text'] },
);

const numericText = fc.oneof(fc.integer().map(String), fc.double({ noNaN: true, noDefaultInfinity: true }).map(String));

export const assessmentItem: fc.Arbitrary<AssessmentItem> = fc.oneof(
  fc.record(
    {
      code: codedValue,
      kind: fc.constant('numeric' as const),
      value: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double(), numericText, hostileText),
      units: optional(hostileText),
    },
    { requiredKeys: ['code', 'kind', 'value'] },
  ),
  fc.record(
    { code: codedValue, kind: fc.constant('text' as const), value: hostileText, units: optional(hostileText) },
    { requiredKeys: ['code', 'kind', 'value'] },
  ),
  fc.record({ code: codedValue, kind: fc.constant('coded' as const), value: fc.oneof(codedValue, requiredText) }, { requiredKeys: ['code', 'kind', 'value'] }),
);

export const assessment: fc.Arbitrary<Assessment> = fc.record(
  {
    patientId: fc.constant(PATIENT_ID),
    assessmentId: requiredText,
    code: codedValue,
    performedAt: chartDateTime,
    performer: optional(clinician),
    items: fc.array(assessmentItem, { maxLength: 5 }),
    total: optional(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double())),
    interpretation: optional(hostileText),
  },
  { requiredKeys: ['patientId', 'assessmentId', 'code', 'performedAt', 'items'] },
);

/** Comparator values and ratios (SN) */
const comparatorText = fc
  .tuple(fc.constantFrom('<', '>', '<=', '>=', '<>', '= ', ' < '), fc.integer({ min: 0, max: 10_000 }), fc.constantFrom('', '.5', '.25'))
  .map(([comparator, whole, fraction]) => `${comparator}${whole}${fraction}`);
/** Text longer than an ST may hold (199), sometimes with line breaks */
const longText = fc
  .tuple(hostileText, fc.integer({ min: 200, max: 600 }), hostileText)
  .map(([before, length, after]) => `${before}${'x'.repeat(length)}${after}`);

export const labResult: fc.Arbitrary<LabResultSummary> = fc.record({
  resultId: requiredText,
  accessionNumber: requiredText,
  status: fc.constantFrom('preliminary', 'final', 'corrected', 'amended', 'cancelled' as const),
  resultedAt: isoDateTime,
  results: fc.array(
    fc.record(
      {
        testName: fc.oneof({ arbitrary: requiredText, weight: 4 }, { arbitrary: fc.constantFrom('Specimen comment', 'Lab note', 'Remarks'), weight: 1 }),
        result: fc.oneof(numericText, comparatorText, longText, hostileText),
        units: optional(hostileText),
        referenceRange: optional(hostileText),
        code: optional(requiredText),
        codeSystem: optional(fc.constantFrom('LN', 'L', '99LAB')),
      },
      { requiredKeys: ['testName', 'result'] },
    ),
    { maxLength: 3 },
  ),
});
