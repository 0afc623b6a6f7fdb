/**
 * Realistic synthetic chart data (no real person) for the HL7 builder tests.
 */
import type { Assessment, ChartRecord, Encounter, Note, Patient } from '../../lib/chart/types';
import type { LabResultSummary, MessageHeaderContext } from '../../lib/hl7';

export const header: MessageHeaderContext = {
  sendingApplication: 'CHART_EXPORT',
  sendingFacility: 'RIVERSIDE_CLINIC',
  receivingApplication: 'PARTNER_EHR',
  receivingFacility: 'PARTNER_HOSP',
  timestamp: new Date('2024-05-06T14:08:09Z'),
  controlId: 'c0ffee00000000000001',
};

export const patient: Patient = {
  patientId: 'pat-000123',
  mrn: 'MRN-448812',
  assigningAuthority: 'RIVERSIDE',
  name: { family: 'Okafor', given: 'Adaeze', middle: 'N', prefix: 'Ms' },
  birthDate: '1984-07-19',
  sex: 'F',
  address: { line1: '742 Evergreen Terrace', line2: 'Apt 3B', city: 'Springfield', state: 'OR', postalCode: '97477', country: 'USA' },
  phone: '+1 541 555 0199',
  email: 'adaeze.okafor@example.org',
  maritalStatus: { code: 'M', display: 'Married', system: 'HL70002' },
  language: { code: 'en', display: 'English', system: 'HL70296' },
  race: { code: '2054-5', display: 'Black or African American', system: 'HL70005' },
  ethnicity: { code: 'N', display: 'Not Hispanic or Latino', system: 'HL70189' },
  primaryCareProvider: { id: 'NPI1234567893', name: { family: 'Lindqvist', given: 'Maja', prefix: 'Dr' } },
  nextOfKin: [
    { name: { family: 'Okafor', given: 'Chinedu' }, relationship: { code: 'SPO', display: 'Spouse', system: 'HL70063' }, phone: '+1 541 555 0142' },
    { name: { family: 'Okafor', given: 'Ngozi' }, relationship: { code: 'MTH', display: 'Mother', system: 'HL70063' } },
  ],
};

export const attending = { id: 'NPI9876543210', name: { family: 'Haddad', given: 'Omar', prefix: 'Dr' } };

export const encounter: Encounter = {
  patientId: patient.patientId,
  encounterId: 'enc-2024-0042',
  patientClass: 'O',
  location: 'Diabetes Clinic Room 4',
  attending,
  admitAt: '2024-04-30T09:15:00-07:00',
  dischargeAt: '2024-04-30T10:05:00-07:00',
  reason: 'Follow-up: type 2 diabetes & hypertension',
  diagnoses: [
    { code: 'E11.9', display: 'Type 2 diabetes mellitus without complications', system: 'I10' },
    { code: 'I10', display: 'Essential (primary) hypertension', system: 'I10' },
  ],
  orders: [
    {
      orderId: 'ord-7781',
      code: { code: '4548-4', display: 'Hemoglobin A1c/Hemoglobin.total in Blood', system: 'LN' },
      orderedAt: '2024-04-30T09:50:00-07:00',
      status: 'completed',
      orderingProvider: attending,
    },
    { orderId: 'ord-7782', code: { code: '2093-3', display: 'Cholesterol [Mass/volume] in Serum or Plasma', system: 'LN' }, status: 'scheduled' },
  ],
};

export const note: Note = {
  patientId: patient.patientId,
  noteId: 'note-55120',
  encounterId: encounter.encounterId,
  author: attending,
  createdAt: '2024-04-30T10:20:00-07:00',
  text: 'S: Feels well. Home BP ~130/85.\r\nO: BMI 31 | A1c pending.\nA/P: Continue metformin 500 mg BID & lisinopril.\n\\ Recheck in 3 months.',
};

export const assessment: Assessment = {
  patientId: patient.patientId,
  assessmentId: 'asm-9001',
  encounterId: encounter.encounterId,
  code: { code: '44249-1', display: 'PHQ-9 quick depression assessment panel', system: 'LN' },
  performedAt: '2024-04-30T09:40:00-07:00',
  performer: { id: 'RN-0042', name: { family: 'Moreau', given: 'Élodie' } },
  items: [
    { code: { code: '44250-9', display: 'Little interest or pleasure in doing things', system: 'LN' }, kind: 'numeric', value: 1 },
    { code: { code: '44255-8', display: 'Feeling down, depressed, or hopeless', system: 'LN' }, kind: 'numeric', value: '2' },
    { code: { code: 'COMMENT', display: 'Clinician comment', system: 'L' }, kind: 'text', value: 'Sleep is poor.\nNo suicidal ideation.' },
    { code: { code: 'MOOD', display: 'Mood', system: 'L' }, kind: 'text', value: 'Euthymic' },
    { code: { code: '69722-7', display: 'Difficulty', system: 'LN' }, kind: 'coded', value: { code: 'LA6569-3', display: 'Somewhat difficult', system: 'LN' } },
    { code: { code: 'WEIGHT', display: 'Body weight', system: 'L' }, kind: 'numeric', value: 92.5, units: 'kg' },
  ],
  total: 3,
  interpretation: 'Minimal depression',
};

export const labResult: LabResultSummary = {
  resultId: 'res-31337',
  accessionNumber: 'ACC-2024-000981',
  status: 'final',
  resultedAt: '2024-05-01T16:45:00Z',
  results: [
    { testName: 'Hemoglobin A1c', result: '7.2', units: '%', referenceRange: '4.0-5.6' },
    { testName: 'Comment', result: 'Specimen slightly hemolyzed', units: '' },
    { testName: 'Glucose', result: '<40', units: 'mg/dL', referenceRange: '70-99' },
  ],
};

export const records: ChartRecord[] = [
  { kind: 'note', at: note.createdAt, record: note },
  { kind: 'assessment', at: assessment.performedAt, record: assessment },
  { kind: 'encounter', at: encounter.admitAt, record: encounter },
];
