/**
 * The US Core profile checker judged on its own: the published US Core examples conform (0
 * violations), and each deliberately broken copy is caught with the rule it breaks.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Resource } from '@medplum/fhirtypes';
import { PROFILES, SKIPPED_BINDINGS, profileViolations, usCoreLabViolations } from './profile-checker';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const EXAMPLES = join(__dirname, '..', 'fhir-intake', 'public-examples', 'us-core');
const example = (file: string): Json => JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as Json;
const OBSERVATIONS = ['cbc-hemoglobin', 'cbc-platelets', 'serum-potassium', 'serum-glucose', 'serum-co2'].map((n) => `observation-${n}.json`);

/** the cbc report with two of its Observations contained (as the service exports reports) */
function containedReport(): Json {
  const report = example('diagnosticreport-cbc.json');
  delete report.text; // the source file's narrative has no div (R4 requires one); not a profile matter
  const obs = [example('observation-cbc-hemoglobin.json'), example('observation-cbc-platelets.json')].map((o, i) => ({ ...o, id: `o${i}` }));
  return { ...report, contained: obs, result: obs.map((o) => ({ reference: `#${o.id}` })) };
}

describe('published US Core examples conform', () => {
  it.each(OBSERVATIONS)('%s: Laboratory Result Observation, 0 violations', (file) => {
    expect(usCoreLabViolations(example(file))).toEqual([]);
  });
  it.each(['diagnosticreport-cbc.json', 'diagnosticreport-metabolic-panel.json'])('%s: DiagnosticReport (Lab), 0 violations', (file) => {
    expect(usCoreLabViolations(example(file))).toEqual([]);
  });
  it('a report with its Observations contained: 0 violations (the contained ones are checked too)', () => {
    expect(usCoreLabViolations(containedReport())).toEqual([]);
  });
  it('patient-example: US Core Patient, 0 violations', () => {
    expect(profileViolations(example('patient-example.json') as Resource, PROFILES.patient)).toEqual([]);
  });
});

describe('the checker fails what breaks the profiles', () => {
  const observation = () => example('observation-cbc-hemoglobin.json');
  const cases: Array<[string, (r: Json) => Json, RegExp, 'obs' | 'report' | 'contained']> = [
    [
      'Observation without the laboratory category (category:us-core 1..1)',
      (o) => ({ ...o, category: [{ text: 'lab' }] }),
      /category:us-core: 0 present, at least 1/,
      'obs',
    ],
    ['Observation without subject (1..1)', ({ subject: _s, ...o }) => o, /Observation\.subject: 0 present, at least 1/, 'obs'],
    ['Observation without value or dataAbsentReason (us-core-2)', ({ valueQuantity: _v, ...o }) => o, /us-core-2 violated/, 'obs'],
    ['effectiveDateTime of a year only (us-core-1)', (o) => ({ ...o, effectiveDateTime: '2005' }), /effectiveDateTime: us-core-1 violated/, 'obs'],
    [
      'valueQuantity in a non-UCUM system (us-core-3)',
      (o) => ({ ...o, valueQuantity: { ...o.valueQuantity, system: 'http://example.org/units' } }),
      /us-core-3 violated/,
      'obs',
    ],
    ['Observation subject a Practitioner', (o) => ({ ...o, subject: { reference: 'Practitioner/x' } }), /subject: references Practitioner/, 'obs'],
    [
      'DiagnosticReport without the LAB category',
      (r) => ({ ...r, category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'RAD' }] }] }),
      /LaboratorySlice: 0 present/,
      'report',
    ],
    [
      'DiagnosticReport with LAB twice (slice 1..1)',
      (r) => ({ ...r, category: [r.category[0], r.category[0]] }),
      /LaboratorySlice: 2 present, at most 1/,
      'report',
    ],
    ['DiagnosticReport status outside the required value set', (r) => ({ ...r, status: 'done' }), /status: \["done"\] not in the required value set/, 'report'],
    [
      'DiagnosticReport result referencing a Condition',
      (r) => ({ ...r, result: [{ reference: 'Condition/c1' }] }),
      /result\[0\]: references Condition/,
      'report',
    ],
    [
      'a contained result Observation without its category',
      (r) => ({ ...r, contained: [{ ...r.contained[0], category: [] }, r.contained[1]] }),
      /contained\[0\]\.category:us-core: 0 present/,
      'contained',
    ],
  ];
  it.each(cases)('%s', (_what, breakIt, expected, kind) => {
    const base = kind === 'obs' ? observation() : kind === 'report' ? example('diagnosticreport-cbc.json') : containedReport();
    const broken = breakIt(base);
    // an Observation is checked against the lab profile directly: usCoreLabViolations picks lab Observations by their category
    const violations = kind === 'obs' ? profileViolations(broken as Resource, PROFILES.observationLab) : usCoreLabViolations(broken);
    expect(violations.join('\n')).toMatch(expected);
  });
  it('a US Core Patient without identifier or name', () => {
    const { identifier: _i, name: _n, ...patient } = example('patient-example.json');
    const violations = profileViolations(patient as Resource, PROFILES.patient);
    expect(violations).toEqual(
      expect.arrayContaining([expect.stringMatching(/Patient\.identifier: 0 present/), expect.stringMatching(/Patient\.name: 0 present/)]),
    );
  });
});

it('skips only the required bindings whose value set is not available offline, and says which', () => {
  usCoreLabViolations(example('observation-cbc-hemoglobin.json'));
  expect([...SKIPPED_BINDINGS.keys()]).toEqual(['http://hl7.org/fhir/us/core/ValueSet/us-core-clinical-result-observation-category']);
});
