/**
 * Every builder with realistic synthetic data: exact expected output (fixtures), the independent structure
 * validator, the Redox parser's structure check, and values read back through @medplum/core and hl7v2.
 */
import RedoxHl7 from '@redoxengine/redox-hl7-v2';
import type { Patient } from '../../lib/chart/types';
import {
  encodeAssessmentMessage,
  encodeEncounterMessage,
  encodeNoteMessage,
  encodePatientAdtMessage,
  encodePatientSummaryMessage,
  Hl7EncodingError,
} from '../../lib/hl7';
import { assessment, attending, encounter, header, labResult, note, patient, records } from './chart-fixtures';
import { loadFixture } from './fixtures';
import { type ExpectedValue, parsedSegmentNames, roundTripFailures, type ValueKind } from './round-trip';
import { receiverRuleIssues } from './receiver-rules';
import { validateHl7Message } from './structure-validator';

function segmentNames(message: string): string[] {
  return message
    .split('\r')
    .filter((segment) => segment !== '')
    .map((segment) => segment.slice(0, 3));
}

function field(message: string, name: string, fieldNumber: number, occurrence = 0): string {
  const segment = message.split('\r').filter((candidate) => candidate.startsWith(`${name}|`))[occurrence] ?? '';
  return segment.split('|')[name === 'MSH' ? fieldNumber - 1 : fieldNumber] ?? '';
}

/** The checks every message gets. */
function expectWellFormed(message: string, structure: string, expectations: ExpectedValue[]): void {
  expect(validateHl7Message(message).issues).toEqual([]);
  expect(receiverRuleIssues(message)).toEqual([]);
  expect(message.endsWith('\r')).toBe(true);
  expect(message).not.toContain('\n');
  expect(field(message, 'MSH', 9).split('^')[2]).toBe(structure);
  const names = segmentNames(message);
  expect(parsedSegmentNames(message)).toEqual({ medplum: names, hl7v2: names });
  // Redox's parser checks required segments and their order against its own copy of the structures.
  expect(() => new RedoxHl7.Parser().parse(message)).not.toThrow();
  expect(roundTripFailures(message, expectations)).toEqual([]);
}

const patientCore: ExpectedValue[] = [
  { at: { segment: 'PID', field: 1 }, value: '1' },
  { at: { segment: 'PID', field: 3, component: 1 }, value: patient.mrn },
  { at: { segment: 'PID', field: 3, component: 4 }, value: patient.assigningAuthority },
  { at: { segment: 'PID', field: 3, component: 5 }, value: 'MR' },
  { at: { segment: 'PID', field: 5, component: 1 }, value: patient.name.family },
  { at: { segment: 'PID', field: 5, component: 2 }, value: patient.name.given ?? '' },
  { at: { segment: 'PID', field: 7 }, value: '19840719' },
  { at: { segment: 'PID', field: 8 }, value: 'F' },
];

const patientFull: ExpectedValue[] = [
  ...patientCore,
  { at: { segment: 'PID', field: 5, component: 3 }, value: 'N' },
  { at: { segment: 'PID', field: 5, component: 5 }, value: 'Ms' },
  { at: { segment: 'PID', field: 10, component: 1 }, value: '2054-5' },
  { at: { segment: 'PID', field: 11, component: 1, subcomponent: 1 }, value: '742 Evergreen Terrace' },
  { at: { segment: 'PID', field: 11, component: 2 }, value: 'Apt 3B' },
  { at: { segment: 'PID', field: 11, component: 3 }, value: 'Springfield' },
  { at: { segment: 'PID', field: 11, component: 5 }, value: '97477' },
  { at: { segment: 'PID', field: 13, component: 1, repetition: 0 }, value: '+1 541 555 0199' },
  { at: { segment: 'PID', field: 13, component: 2, repetition: 0 }, value: 'PRN' },
  { at: { segment: 'PID', field: 13, component: 2, repetition: 1 }, value: 'NET' },
  { at: { segment: 'PID', field: 13, component: 3, repetition: 1 }, value: 'Internet' },
  { at: { segment: 'PID', field: 13, component: 4, repetition: 1 }, value: 'adaeze.okafor@example.org' },
  { at: { segment: 'PID', field: 15, component: 1 }, value: 'en' },
  { at: { segment: 'PID', field: 16, component: 1 }, value: 'M' },
  { at: { segment: 'PID', field: 16, component: 2 }, value: 'Married' },
  { at: { segment: 'PID', field: 22, component: 1 }, value: 'N' },
  { at: { segment: 'PD1', field: 4, component: 2 }, value: 'Lindqvist' },
  { at: { segment: 'NK1', field: 2, component: 2 }, value: 'Chinedu' },
  { at: { segment: 'NK1', field: 3, component: 1 }, value: 'SPO' },
  { at: { segment: 'NK1', field: 5, component: 1 }, value: '+1 541 555 0142' },
  { at: { segment: 'NK1', occurrence: 1, field: 1 }, value: '2' },
  { at: { segment: 'NK1', occurrence: 1, field: 3, component: 2 }, value: 'Mother' },
];

describe('encodeNoteMessage (MDM^T02^MDM_T02)', () => {
  const message = encodeNoteMessage({ header, patient, encounter, note });

  test('matches the reviewed fixture exactly', () => {
    expect(message).toBe(loadFixture('mdm-t02-note'));
  });

  test('segments in the spec order, valid, and values read back by two parsers', () => {
    expect(segmentNames(message)).toEqual(['MSH', 'EVN', 'PID', 'PV1', 'TXA', 'OBX']);
    expectWellFormed(message, 'MDM_T02', [
      ...patientCore,
      { at: { segment: 'MSH', field: 9, component: 1 }, value: 'MDM' },
      { at: { segment: 'MSH', field: 9, component: 2 }, value: 'T02' },
      { at: { segment: 'MSH', field: 10 }, value: header.controlId },
      { at: { segment: 'MSH', field: 11 }, value: 'P' },
      { at: { segment: 'MSH', field: 12 }, value: '2.5.1' },
      { at: { segment: 'EVN', field: 1 }, value: 'T02' },
      { at: { segment: 'EVN', field: 2 }, value: '20240506140809+0000', kind: 'timestamp' },
      { at: { segment: 'PV1', field: 2 }, value: 'O' },
      { at: { segment: 'PV1', field: 3, component: 1 }, value: 'Diabetes Clinic Room 4' },
      { at: { segment: 'PV1', field: 7, component: 2 }, value: 'Haddad' },
      { at: { segment: 'TXA', field: 2 }, value: 'PN' },
      { at: { segment: 'TXA', field: 3 }, value: 'TEXT' },
      { at: { segment: 'TXA', field: 4 }, value: '20240430102000-0700', kind: 'timestamp' },
      { at: { segment: 'TXA', field: 5, component: 2 }, value: 'Haddad' },
      { at: { segment: 'TXA', field: 6 }, value: '20240430102000-0700', kind: 'timestamp' },
      { at: { segment: 'TXA', field: 9, component: 3 }, value: 'Omar' },
      { at: { segment: 'TXA', field: 12, component: 1 }, value: note.noteId },
      { at: { segment: 'TXA', field: 12, component: 2 }, value: header.sendingFacility },
      { at: { segment: 'TXA', field: 17 }, value: 'AU' },
      { at: { segment: 'TXA', field: 19 }, value: 'AV' },
      { at: { segment: 'TXA', field: 22, component: 2 }, value: 'Haddad' },
      { at: { segment: 'TXA', field: 22, component: 15 }, value: '20240430102000-0700' },
      { at: { segment: 'PV1', field: 19, component: 1 }, value: encounter.encounterId },
      { at: { segment: 'PV1', field: 19, component: 5 }, value: 'VN' },
      { at: { segment: 'OBX', field: 2 }, value: 'TX' },
      { at: { segment: 'OBX', field: 3, component: 1 }, value: 'NOTE' },
      { at: { segment: 'OBX', field: 3, component: 2 }, value: 'ChartNote' },
      { at: { segment: 'OBX', field: 3, component: 3 }, value: 'L' },
      { at: { segment: 'OBX', field: 5 }, value: note.text, kind: 'lines' },
      { at: { segment: 'OBX', field: 11 }, value: 'F' },
    ]);
  });

  test('a multi-line note is one OBX, one OBX-5 repetition per line (TX has no formatting commands)', () => {
    expect(field(message, 'OBX', 5)).toBe(
      'S: Feels well. Home BP \\R\\130/85.~O: BMI 31 \\F\\ A1c pending.~A/P: Continue metformin 500 mg BID \\T\\ lisinopril.~\\E\\ Recheck in 3 months.',
    );
  });

  test('empty lines stay as empty repetitions', () => {
    const spaced = encodeNoteMessage({ header, patient, encounter, note: { ...note, text: 'First\n\nThird\r\n' } });
    expect(field(spaced, 'OBX', 5)).toBe('First~~Third~');
    expectWellFormed(spaced, 'MDM_T02', [{ at: { segment: 'OBX', field: 5 }, value: 'First\n\nThird\r\n', kind: 'lines' }]);
  });

  test('the partner profile may choose TXA-2 (e.g. PR)', () => {
    const progress = encodeNoteMessage({ header, patient, encounter, note, documentType: 'PR' });
    expect(field(progress, 'TXA', 2)).toBe('PR');
    expectWellFormed(progress, 'MDM_T02', []);
  });

  test('without an encounter: PV1-2 N, no location, PV1-7 the author', () => {
    const author = { id: 'NP-7', name: { family: 'Nakamura', given: 'Ren' } };
    const standalone = encodeNoteMessage({ header, patient, note: { ...note, encounterId: undefined, author } });
    expect(segmentNames(standalone)).toEqual(['MSH', 'EVN', 'PID', 'PV1', 'TXA', 'OBX']);
    expect(standalone.split('\r')[3]).toBe('PV1|1|N|||||NP-7^Nakamura^Ren^^^^^^RIVERSIDE_CLINIC^L^^^PRN');
    expectWellFormed(standalone, 'MDM_T02', [{ at: { segment: 'TXA', field: 5, component: 2 }, value: 'Nakamura' }]);
  });

  test('with an encounter that has no attending: PV1-7 the author', () => {
    const message2 = encodeNoteMessage({ header, patient, encounter: { ...encounter, attending: undefined }, note });
    expect(field(message2, 'PV1', 7)).toBe('NPI9876543210^Haddad^Omar^^^Dr^^^RIVERSIDE_CLINIC^L^^^PRN');
  });

  test('ASCII-only message: no MSH-18', () => {
    expect(field(message, 'MSH', 18)).toBe('');
  });
});

describe('encodePatientAdtMessage (ADT^A08^ADT_A01)', () => {
  const message = encodePatientAdtMessage({ header, patient });

  test('matches the reviewed fixture exactly', () => {
    expect(message).toBe(loadFixture('adt-a08-patient'));
  });

  test('valid, and values read back by two parsers', () => {
    expect(segmentNames(message)).toEqual(['MSH', 'EVN', 'PID', 'PD1', 'NK1', 'NK1', 'PV1']);
    expectWellFormed(message, 'ADT_A01', [
      ...patientFull,
      { at: { segment: 'EVN', field: 1 }, value: 'A08' },
      { at: { segment: 'PV1', field: 2 }, value: 'N' },
    ]);
  });

  test('a patient with only the required values', () => {
    const minimal: Patient = { patientId: 'p-min', mrn: 'M1', assigningAuthority: 'AUTH', name: { family: 'Solo' } };
    const minimalMessage = encodePatientAdtMessage({ header, patient: minimal });
    expect(minimalMessage.split('\r').slice(1)).toEqual(['EVN|A08|20240506140809+0000', 'PID|1||M1^^^AUTH^MR||Solo^^^^^^L', 'PV1|1|N', '']);
    expectWellFormed(minimalMessage, 'ADT_A01', []);
  });

  test('e-mail without a phone is the first PID-13 repetition', () => {
    const message2 = encodePatientAdtMessage({ header, patient: { ...patient, phone: undefined } });
    expect(field(message2, 'PID', 13)).toBe('^NET^Internet^adaeze.okafor@example.org');
  });

  test('non-ASCII demographics declare UNICODE UTF-8 in MSH-18', () => {
    const message2 = encodePatientAdtMessage({ header, patient: { ...patient, name: { family: 'Ñúñez', given: 'Zoë' } } });
    expect(field(message2, 'MSH', 18)).toBe('UNICODE UTF-8');
    expectWellFormed(message2, 'ADT_A01', [{ at: { segment: 'PID', field: 5, component: 1 }, value: 'Ñúñez' }]);
  });
});

describe('encodeEncounterMessage, style adt (ADT^A08^ADT_A01, the default)', () => {
  const message = encodeEncounterMessage({ header, patient, encounter });

  test('matches the reviewed fixture exactly', () => {
    expect(message).toBe(loadFixture('adt-a08-encounter'));
  });

  test('PV1, PV2 and one DG1 per diagnosis (DG1-6 F once discharged); valid; values read back', () => {
    expect(segmentNames(message)).toEqual(['MSH', 'EVN', 'PID', 'PV1', 'PV2', 'DG1', 'DG1']);
    expectWellFormed(message, 'ADT_A01', [
      ...patientFull.filter((value) => !['PD1', 'NK1'].includes(value.at.segment)),
      { at: { segment: 'EVN', field: 1 }, value: 'A08' },
      { at: { segment: 'PV1', field: 2 }, value: 'O' },
      { at: { segment: 'PV1', field: 19, component: 1 }, value: encounter.encounterId },
      { at: { segment: 'PV1', field: 19, component: 4 }, value: header.sendingFacility },
      { at: { segment: 'PV1', field: 44 }, value: '20240430091500-0700', kind: 'timestamp' },
      { at: { segment: 'DG1', field: 1 }, value: '1' },
      { at: { segment: 'DG1', field: 3, component: 1 }, value: 'E11.9' },
      { at: { segment: 'DG1', field: 3, component: 3 }, value: 'I10C' },
      { at: { segment: 'DG1', field: 6 }, value: 'F' },
      { at: { segment: 'DG1', occurrence: 1, field: 1 }, value: '2' },
      { at: { segment: 'DG1', occurrence: 1, field: 3, component: 2 }, value: 'Essential (primary) hypertension' },
    ]);
  });

  test('an open encounter: working diagnoses (DG1-6 W)', () => {
    const open = encodeEncounterMessage({ header, patient, encounter: { ...encounter, dischargeAt: undefined } });
    expect([field(open, 'DG1', 6, 0), field(open, 'DG1', 6, 1)]).toEqual(['W', 'W']);
    expectWellFormed(open, 'ADT_A01', []);
  });

  test('without diagnoses or reason: EVN PID PV1', () => {
    const bare = encodeEncounterMessage({
      header,
      patient,
      encounter: { patientId: patient.patientId, encounterId: 'enc-1', patientClass: 'E', admitAt: '2024-01-01T00:00:00Z' },
    });
    expect(segmentNames(bare)).toEqual(['MSH', 'EVN', 'PID', 'PV1']);
    expectWellFormed(bare, 'ADT_A01', [{ at: { segment: 'PV1', field: 2 }, value: 'E' }]);
  });
});

describe('encodeEncounterMessage, style oru (ORU^R01^ORU_R01)', () => {
  const message = encodeEncounterMessage({ header, patient, encounter, style: 'oru' });

  test('matches the reviewed fixture exactly', () => {
    expect(message).toBe(loadFixture('oru-r01-encounter'));
  });

  test('valid, and values read back by two parsers', () => {
    expect(segmentNames(message)).toEqual(['MSH', 'PID', 'PV1', 'PV2', 'OBR', 'OBX', 'OBX', 'ORC', 'OBR', 'ORC', 'OBR']);
    expectWellFormed(message, 'ORU_R01', [
      ...patientCore,
      { at: { segment: 'PV1', field: 2 }, value: 'O' },
      { at: { segment: 'PV1', field: 3, component: 1 }, value: encounter.location ?? '' },
      { at: { segment: 'PV1', field: 7, component: 1 }, value: attending.id },
      { at: { segment: 'PV1', field: 19, component: 1 }, value: encounter.encounterId },
      { at: { segment: 'PV1', field: 19, component: 5 }, value: 'VN' },
      { at: { segment: 'PV1', field: 44 }, value: '20240430091500-0700', kind: 'timestamp' },
      { at: { segment: 'PV1', field: 45 }, value: '20240430100500-0700', kind: 'timestamp' },
      { at: { segment: 'PV2', field: 3, component: 2 }, value: encounter.reason ?? '' },
      { at: { segment: 'OBR', field: 3, component: 1 }, value: encounter.encounterId },
      { at: { segment: 'OBR', field: 4, component: 1 }, value: 'ENCOUNTER' },
      { at: { segment: 'OBR', field: 7 }, value: '20240430091500-0700', kind: 'timestamp' },
      { at: { segment: 'OBR', field: 25 }, value: 'F' },
      { at: { segment: 'OBX', field: 2 }, value: 'CE' },
      { at: { segment: 'OBX', field: 5, component: 1 }, value: 'E11.9' },
      { at: { segment: 'OBX', field: 5, component: 3 }, value: 'I10C' },
      { at: { segment: 'OBX', occurrence: 1, field: 4 }, value: '2' },
      { at: { segment: 'OBX', occurrence: 1, field: 5, component: 2 }, value: 'Essential (primary) hypertension' },
      // orders without results: ORC-1 SC (no observations follow), OBR-25 says no results are available
      { at: { segment: 'ORC', field: 1 }, value: 'SC' },
      { at: { segment: 'ORC', field: 2, component: 1 }, value: 'ord-7781' },
      // a completed order the chart holds no results for: in process, no results yet (never CM beside an OBR without OBX)
      { at: { segment: 'ORC', field: 5 }, value: 'IP' },
      { at: { segment: 'ORC', field: 12, component: 2 }, value: 'Haddad' },
      { at: { segment: 'OBR', occurrence: 1, field: 2, component: 1 }, value: 'ord-7781' },
      { at: { segment: 'OBR', occurrence: 1, field: 4, component: 1 }, value: '4548-4' },
      { at: { segment: 'OBR', occurrence: 1, field: 7 }, value: '20240430095000-0700', kind: 'timestamp' },
      { at: { segment: 'OBR', occurrence: 1, field: 25 }, value: 'I' },
      { at: { segment: 'ORC', occurrence: 1, field: 5 }, value: 'SC' },
      { at: { segment: 'OBR', occurrence: 2, field: 1 }, value: '3' },
      { at: { segment: 'OBR', occurrence: 2, field: 4, component: 2 }, value: 'Cholesterol [Mass/volume] in Serum or Plasma' },
      { at: { segment: 'OBR', occurrence: 2, field: 7 }, value: '20240430091500-0700', kind: 'timestamp' },
      { at: { segment: 'OBR', occurrence: 2, field: 25 }, value: 'S' },
    ]);
  });

  test('the same structure without orders, diagnoses, reason or discharge', () => {
    const bare = encodeEncounterMessage({
      header,
      patient,
      style: 'oru',
      encounter: { patientId: patient.patientId, encounterId: 'enc-1', patientClass: 'E', admitAt: '2024-01-01T00:00:00Z' },
    });
    expect(segmentNames(bare)).toEqual(['MSH', 'PID', 'PV1', 'OBR']);
    expect(field(bare, 'OBR', 25)).toBe('P');
    expectWellFormed(bare, 'ORU_R01', [{ at: { segment: 'PV1', field: 2 }, value: 'E' }]);
  });

  test('an open encounter (no discharge): diagnoses are working, OBR-25 and OBX-11 P', () => {
    const open = encodeEncounterMessage({ header, patient, style: 'oru', encounter: { ...encounter, dischargeAt: undefined } });
    expect(field(open, 'OBR', 25)).toBe('P');
    expect([field(open, 'OBX', 11, 0), field(open, 'OBX', 11, 1)]).toEqual(['P', 'P']);
    expectWellFormed(open, 'ORU_R01', []);
  });

  test('an order status outside table 0038 leaves ORC-5 empty and OBR-25 O; a cancelled one is X', () => {
    const message2 = encodeEncounterMessage({
      header,
      patient,
      style: 'oru',
      encounter: {
        ...encounter,
        orders: [
          { orderId: 'o-1', code: { code: 'X', system: 'L' }, status: 'waiting for the moon' },
          { orderId: 'o-2', code: { code: 'Y', system: 'L' }, status: 'cancelled' },
        ],
      },
    });
    expect(field(message2, 'ORC', 5)).toBe('');
    expect([field(message2, 'OBR', 25, 1), field(message2, 'OBR', 25, 2)]).toEqual(['O', 'X']);
    expectWellFormed(message2, 'ORU_R01', []);
  });
});

describe('encodeAssessmentMessage (ORU^R01^ORU_R01)', () => {
  const message = encodeAssessmentMessage({ header, patient, encounter, assessment });

  test('matches the reviewed fixture exactly', () => {
    expect(message).toBe(loadFixture('oru-r01-assessment'));
  });

  test('valid, and values read back by two parsers', () => {
    expect(segmentNames(message)).toEqual(['MSH', 'PID', 'PV1', 'PV2', 'OBR', ...Array(8).fill('OBX')]);
    const obx = (occurrence: number, fieldNumber: number, value: string, component?: number, kind?: ValueKind): ExpectedValue => ({
      at: { segment: 'OBX', occurrence, field: fieldNumber, component },
      value,
      kind,
    });
    expectWellFormed(message, 'ORU_R01', [
      ...patientCore,
      { at: { segment: 'OBR', field: 3, component: 1 }, value: assessment.assessmentId },
      { at: { segment: 'OBR', field: 4, component: 1 }, value: '44249-1' },
      { at: { segment: 'OBR', field: 4, component: 3 }, value: 'LN' },
      obx(0, 2, 'NM'),
      obx(0, 5, '1'),
      obx(1, 2, 'NM'),
      obx(1, 5, '2'),
      obx(2, 2, 'TX'),
      obx(2, 5, 'Sleep is poor.\nNo suicidal ideation.', undefined, 'lines'),
      obx(3, 2, 'ST'),
      obx(3, 5, 'Euthymic'),
      obx(4, 2, 'CE'),
      obx(4, 5, 'LA6569-3', 1),
      obx(4, 5, 'Somewhat difficult', 2),
      obx(5, 5, '92.5'),
      obx(5, 6, 'kg', 1),
      obx(6, 3, 'TOTAL', 1),
      obx(6, 5, '3'),
      obx(7, 2, 'ST'),
      obx(7, 5, 'Minimal depression'),
      obx(7, 11, 'F'),
      obx(7, 14, '20240430094000-0700', undefined, 'timestamp'),
      obx(7, 16, 'Élodie', 3),
    ]);
    expect(field(message, 'MSH', 18)).toBe('UNICODE UTF-8');
  });

  test('without an encounter there is no VISIT group', () => {
    const message2 = encodeAssessmentMessage({ header, patient, assessment: { ...assessment, encounterId: undefined } });
    expect(segmentNames(message2).slice(0, 3)).toEqual(['MSH', 'PID', 'OBR']);
    expectWellFormed(message2, 'ORU_R01', []);
  });

  test('numbers without an NM form fall back to ST; repeated item codes get OBX-4 sub-ids', () => {
    const code = { code: 'Q', system: 'L' };
    const message2 = encodeAssessmentMessage({
      header,
      patient,
      assessment: {
        ...assessment,
        items: [
          { code, kind: 'numeric', value: Number.NaN },
          { code, kind: 'numeric', value: 1e21 },
          { code, kind: 'numeric', value: 'not a number' },
        ],
        total: undefined,
        interpretation: undefined,
      },
    });
    const obxSegments = message2.split('\r').filter((segment) => segment.startsWith('OBX|'));
    expect(obxSegments.map((segment) => segment.split('|').slice(1, 6).join('|'))).toEqual([
      '1|ST|Q^^L|1|NaN',
      '2|ST|Q^^L|2|1e+21',
      '3|ST|Q^^L|3|not a number',
    ]);
    expectWellFormed(message2, 'ORU_R01', []);
  });
});

describe('encodePatientSummaryMessage (ORU^R01^ORU_R01)', () => {
  const message = encodePatientSummaryMessage({ header, patient, records, labResults: [labResult] });

  test('matches the reviewed fixture exactly', () => {
    expect(message).toBe(loadFixture('oru-r01-summary'));
  });

  /** OBR-4.1 of every group, in order. */
  function groupServices(summary: string): Array<string | undefined> {
    return summary
      .split('\r')
      .filter((segment) => segment.startsWith('OBR|'))
      .map((segment) => segment.split('|')[4]?.split('^')[0]);
  }

  test('one group per record, records and lab results merged newest first; valid; values read back', () => {
    // lab 2024-05-01T16:45Z, note 2024-04-30T17:20Z, assessment 16:40Z, encounter 16:15Z
    // the encounter's orders follow it as groups of their own (ORC-1 SC)
    expect(groupServices(message)).toEqual(['LAB', 'NOTE', '44249-1', 'ENCOUNTER', '4548-4', '2093-3']);
    expectWellFormed(message, 'ORU_R01', [
      ...patientFull,
      { at: { segment: 'OBR', field: 2, component: 1 }, value: labResult.resultId },
      { at: { segment: 'OBR', field: 3, component: 1 }, value: labResult.accessionNumber },
      { at: { segment: 'OBR', field: 3, component: 2 }, value: header.sendingFacility },
      { at: { segment: 'OBR', field: 7 }, value: '20240501164500+0000', kind: 'timestamp' },
      { at: { segment: 'OBR', field: 22 }, value: '20240501164500+0000', kind: 'timestamp' },
      { at: { segment: 'OBR', field: 25 }, value: 'F' },
      { at: { segment: 'NTE', field: 3 }, value: 'Comment: Specimen slightly hemolyzed' },
      { at: { segment: 'OBR', occurrence: 1, field: 1 }, value: '2' },
      { at: { segment: 'OBR', occurrence: 1, field: 3, component: 1 }, value: note.noteId },
      { at: { segment: 'OBX', occurrence: 2, field: 1 }, value: '1' },
      { at: { segment: 'OBX', occurrence: 2, field: 5 }, value: note.text, kind: 'lines' },
      { at: { segment: 'OBX', occurrence: 2, field: 16, component: 2 }, value: 'Haddad' },
    ]);
  });

  test('the records keep the order handed in; a lab result goes first only when strictly newer', () => {
    const at = (iso: string) => ({ ...labResult, resultedAt: iso });
    const summary = encodePatientSummaryMessage({
      header,
      patient,
      // deliberately not sorted by time: the records' order is the caller's
      records: [
        { kind: 'note', at: '2024-03-01T00:00:00Z', record: note },
        { kind: 'encounter', at: '2024-06-01T00:00:00Z', record: encounter },
        { kind: 'assessment', at: '2024-01-01T00:00:00Z', record: assessment },
      ],
      labResults: [at('2024-03-01T00:00:00Z'), at('2024-02-01T00:00:00Z'), at('2023-01-01T00:00:00Z')],
    });
    expect(groupServices(summary)).toEqual(['NOTE', 'ENCOUNTER', '4548-4', '2093-3', 'LAB', 'LAB', '44249-1', 'LAB']);
    expectWellFormed(summary, 'ORU_R01', []);
  });

  test('lab results: coded OBX-3, NM when numeric, SN for a comparator; reference range; OBX-11 from the status', () => {
    const statuses = ['preliminary', 'final', 'corrected', 'amended', 'cancelled'] as const;
    const labMessage = encodePatientSummaryMessage({
      header,
      patient,
      records: [],
      labResults: statuses.map((status, index) => ({ ...labResult, resultId: `r-${index}`, status })),
    });
    expectWellFormed(labMessage, 'ORU_R01', [
      { at: { segment: 'OBX', field: 2 }, value: 'NM' },
      { at: { segment: 'OBX', field: 3, component: 1 }, value: 'HEMOGLOBIN-A1C' },
      { at: { segment: 'OBX', field: 3, component: 2 }, value: 'Hemoglobin A1c' },
      { at: { segment: 'OBX', field: 3, component: 3 }, value: 'L' },
      { at: { segment: 'OBX', field: 5 }, value: '7.2' },
      { at: { segment: 'OBX', field: 6, component: 1 }, value: '%' },
      { at: { segment: 'OBX', field: 7 }, value: '4.0-5.6' },
      { at: { segment: 'OBX', occurrence: 1, field: 2 }, value: 'SN' },
      { at: { segment: 'OBX', occurrence: 1, field: 5, component: 1 }, value: '<' },
      { at: { segment: 'OBX', occurrence: 1, field: 5, component: 2 }, value: '40' },
    ]);
    const obx11 = labMessage
      .split('\r')
      .filter((segment) => segment.startsWith('OBX|1|'))
      .map((segment) => segment.split('|')[11]);
    const obr25 = labMessage
      .split('\r')
      .filter((segment) => segment.startsWith('OBR|'))
      .map((segment) => segment.split('|')[25]);
    expect(obx11).toEqual(['P', 'F', 'C', 'C', 'X']);
    expect(obr25).toEqual(['P', 'F', 'C', 'C', 'X']);
  });

  test('a patient with no records: demographics and the one OBR ORU_R01 requires', () => {
    const empty = encodePatientSummaryMessage({ header, patient, records: [] });
    expect(empty).toBe(loadFixture('oru-r01-summary-empty'));
    expect(segmentNames(empty)).toEqual(['MSH', 'PID', 'PD1', 'NK1', 'NK1', 'OBR', 'NTE']);
    expect(field(empty, 'OBR', 4)).toBe('NO_RECORDS^No chart records^L');
    expect([field(empty, 'OBR', 7), field(empty, 'OBR', 25)]).toEqual(['20240506140809+0000', 'F']);
    expectWellFormed(empty, 'ORU_R01', patientFull);
  });
});

describe('every builder', () => {
  test('is deterministic and does not change its input', () => {
    const input = structuredClone({ header, patient, records, labResults: [labResult] });
    const first = encodePatientSummaryMessage(input);
    expect(encodePatientSummaryMessage(input)).toBe(first);
    expect(input).toEqual({ header, patient, records, labResults: [labResult] });
  });

  test('MSH-10 is the caller-supplied control id', () => {
    expect(field(encodePatientAdtMessage({ header: { ...header, controlId: 'ABC-123' }, patient }), 'MSH', 10)).toBe('ABC-123');
  });
});

describe('input that cannot be encoded is refused with Hl7EncodingError naming the input', () => {
  const otherPatientNote = { ...note, patientId: 'someone-else' };
  test.each([
    ['a note of another patient', () => encodeNoteMessage({ header, patient, note: otherPatientNote }), 'note.patientId'],
    ['an encounter of another patient', () => encodeEncounterMessage({ header, patient, encounter: { ...encounter, patientId: 'x' } }), 'encounter.patientId'],
    [
      'a note with another encounter',
      () => encodeNoteMessage({ header, patient, encounter: { ...encounter, encounterId: 'enc-other' }, note }),
      'encounter.encounterId',
    ],
    [
      'an assessment of another patient',
      () => encodeAssessmentMessage({ header, patient, assessment: { ...assessment, patientId: 'x' } }),
      'assessment.patientId',
    ],
    [
      'a summary record of another patient',
      () => encodePatientSummaryMessage({ header, patient, records: [{ kind: 'note', at: note.createdAt, record: otherPatientNote }] }),
      'records[0].record.patientId',
    ],
    ['an empty MRN', () => encodePatientAdtMessage({ header, patient: { ...patient, mrn: '' } }), 'patient.mrn'],
    ['an empty name', () => encodePatientAdtMessage({ header, patient: { ...patient, name: { family: '' } } }), 'patient.name'],
    ['a malformed birth date', () => encodePatientAdtMessage({ header, patient: { ...patient, birthDate: '07/19/1984' } }), 'patient.birthDate'],
    ['a sex outside table 0001', () => encodePatientAdtMessage({ header, patient: { ...patient, sex: 'female' as never } }), 'patient.sex'],
    [
      'a patient class outside table 0004',
      () => encodeEncounterMessage({ header, patient, encounter: { ...encounter, patientClass: 'X' as never } }),
      'encounter.patientClass',
    ],
    ['a date-time without a zone', () => encodeNoteMessage({ header, patient, note: { ...note, createdAt: '2024-04-30T10:20:00' } }), 'note.createdAt'],
    ['an empty note id', () => encodeNoteMessage({ header, patient, note: { ...note, noteId: '' } }), 'note.noteId'],
    ['a control id longer than 20', () => encodePatientAdtMessage({ header: { ...header, controlId: 'x'.repeat(21) }, patient }), 'header.controlId'],
    ['an invalid message time', () => encodePatientAdtMessage({ header: { ...header, timestamp: new Date('nope') }, patient }), 'header.timestamp'],
    [
      'an item without a code',
      () => encodeAssessmentMessage({ header, patient, assessment: { ...assessment, items: [{ code: { code: '' }, kind: 'text', value: 'x' }] } }),
      'assessment.items[0].code',
    ],
  ])('%s', (_label, encode, inputPath) => {
    expect(encode).toThrow(Hl7EncodingError);
    try {
      encode();
    } catch (error) {
      expect((error as Hl7EncodingError).inputPath).toBe(inputPath);
    }
  });
});
