import { encounterOrderGroups, labResultObservationGroup, makeObservation, ObservationGroup, textObservationValue } from './observations';

describe('ObservationGroup', () => {
  const namespaces = { entity: 'CLINIC', clinician: 'CLINIC', visit: 'CLINIC' };
  const nurse = { id: 'RN-1', name: { family: 'Moreau', given: 'Élodie' } };
  const doctor = { id: 'MD-2', name: { family: 'Haddad', given: 'Omar' } };
  const code = (value: string) => ({ code: value, display: value, system: 'L' });

  test('OBX-16 of each row is its own responsible observer, whether or not the row before had the same one', () => {
    const group = new ObservationGroup({ serviceIdentifier: code('PANEL'), observedAt: '2024-05-06T07:08:09Z', resultStatus: 'F', inputPath: 'x' }).add(
      makeObservation(code('A'), textObservationValue('a'), 'F', 'x.a', { responsibleObserver: nurse }),
      makeObservation(code('B'), textObservationValue('b'), 'F', 'x.b', { responsibleObserver: nurse }),
      makeObservation(code('C'), textObservationValue('c'), 'F', 'x.c', { responsibleObserver: doctor }),
      makeObservation(code('D'), textObservationValue('d'), 'F', 'x.d'),
      makeObservation(code('E'), textObservationValue('e'), 'F', 'x.e', { responsibleObserver: { ...nurse } }),
    );
    const observers = group
      .toSegments(1, namespaces)
      .filter((segment) => segment.name === 'OBX')
      .map((segment) => segment.fieldText(16));
    expect(observers).toEqual([
      'RN-1^Moreau^Élodie^^^^^^CLINIC^L^^^PRN',
      'RN-1^Moreau^Élodie^^^^^^CLINIC^L^^^PRN',
      'MD-2^Haddad^Omar^^^^^^CLINIC^L^^^PRN',
      '',
      'RN-1^Moreau^Élodie^^^^^^CLINIC^L^^^PRN',
    ]);
    expect(
      group
        .toSegments(1, namespaces)
        .every((segment, index) => index === 0 || segment.name !== 'OBX' || segment.hasNonAsciiText() === segment.toString().includes('É')),
    ).toBe(true);
  });
});

test('OBX-14 of each row is its own time, whether or not the row before had the same one', () => {
  const code = (value: string) => ({ code: value, display: value, system: 'L' });
  const group = new ObservationGroup({ serviceIdentifier: code('PANEL'), observedAt: '2024-05-06T07:08:09Z', resultStatus: 'F', inputPath: 'x' }).add(
    makeObservation(code('A'), textObservationValue('a'), 'F', 'x.a', { observedAt: '2024-05-06T07:08:09-05:00' }),
    makeObservation(code('B'), textObservationValue('b'), 'F', 'x.b', { observedAt: '2024-05-06T07:08:09-05:00' }),
    makeObservation(code('C'), textObservationValue('c'), 'F', 'x.c', { observedAt: { asSent: '2024-05-06T07:08' } }),
    makeObservation(code('D'), textObservationValue('d'), 'F', 'x.d'),
    makeObservation(code('E'), textObservationValue('e'), 'F', 'x.e', { observedAt: '2024-05-06T07:08:10Z' }),
  );
  const times = group
    .toSegments(1, { entity: 'C', clinician: 'C', visit: 'C' })
    .filter((segment) => segment.name === 'OBX')
    .map((segment) => segment.fieldText(14));
  expect(times).toEqual(['20240506120809+0000', '20240506120809+0000', '202405060708', '', '20240506070810+0000']);
});

test('OBX-7 is the range only when it is in OBX-6 units: a range sent in other units is left out (it lives in FHIR), never written bare beside OBX-6', () => {
  const test = { testName: 'Glucose', result: '100', units: 'mg/dL', unitsCode: 'mg/dL', referenceRange: '70-99' };
  const lab = {
    resultId: 'lr-1',
    accessionNumber: 'ACC-1',
    status: 'final' as const,
    resultedAt: '2024-03-01T10:15:00Z',
    senderId: 'demo-lab',
    results: [
      test,
      { ...test, referenceRange: '3.9-5.5', referenceRangeUnits: 'mmol/L' },
      { ...test, referenceRange: '3.9-5.5', referenceRangeUnits: 'millimole per liter', referenceRangeUnitsCode: 'mmol/L' },
      { ...test, referenceRange: '70-99', referenceRangeUnits: 'milligram per deciliter', referenceRangeUnitsCode: 'mg/dL' },
      { ...test, units: 'mg/dL', unitsCode: undefined, referenceRange: '70-99', referenceRangeUnits: 'mg/dL' },
      { testName: 'HBsAg', result: 'Negative', referenceRange: '0-0.9', referenceRangeUnits: 'index value', referenceRangeUnitsCode: '{index}' },
    ],
  };
  const obx7 = labResultObservationGroup(lab, 'lab')
    .toSegments(1, { entity: 'CLINIC', clinician: 'CLINIC', visit: 'CLINIC' })
    .filter((segment) => segment.name === 'OBX')
    .map((segment) => [segment.fieldText(6), segment.fieldText(7)]);
  expect(obx7).toEqual([
    ['mg/dL^mg/dL^UCUM', '70-99'],
    ['mg/dL^mg/dL^UCUM', ''],
    ['mg/dL^mg/dL^UCUM', ''],
    ['mg/dL^mg/dL^UCUM', '70-99'],
    ['mg/dL', '70-99'],
    ['', ''],
  ]);
});

test("an order without orderedAt takes the encounter's admitAt for OBR-7: a bad admitAt is reported at the admitAt path, a bad orderedAt at its own", () => {
  const encounter = (admitAt: string, orderedAt?: string) =>
    ({
      encounterId: 'enc-1',
      patientId: 'p-1',
      admitAt,
      orders: [{ orderId: 'ORD-1', code: { code: 'CBC', display: 'CBC', system: 'L' }, orderedAt }],
    }) as unknown as Parameters<typeof encounterOrderGroups>[0];
  const errorPath = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return (error as { inputPath?: string }).inputPath;
    }
    return 'no error';
  };
  expect(errorPath(() => encounterOrderGroups(encounter('2024-03-01T10:00:00'), 'encounter'))).toBe('encounter.admitAt');
  expect(errorPath(() => encounterOrderGroups(encounter('2024-03-01T10:00:00-05:00', '2024-03-01T11:00:00'), 'encounter'))).toBe(
    'encounter.orders[0].orderedAt',
  );
  expect(encounterOrderGroups(encounter('2024-03-01T10:00:00-05:00'), 'encounter')).toHaveLength(1);
});

test('OBX-3 + OBX-4 stay unique when the lab gave one observation a sub-id and two others with the same OBX-3 none: the numbers skip the one given', () => {
  const code = (value: string) => ({ code: value, display: value, system: 'L' });
  const group = new ObservationGroup({ serviceIdentifier: code('PANEL'), observedAt: '2024-05-06T07:08:09Z', resultStatus: 'F', inputPath: 'x' }).add(
    makeObservation(code('ORG'), textObservationValue('E. coli'), 'F', 'x.a', { subId: '1' }),
    makeObservation(code('ORG'), textObservationValue('K. pneumoniae'), 'F', 'x.b'),
    makeObservation(code('ORG'), textObservationValue('S. aureus'), 'F', 'x.c'),
  );
  const pairs = group
    .toSegments(1, { entity: 'CLINIC', clinician: 'CLINIC', visit: 'CLINIC' })
    .filter((segment) => segment.name === 'OBX')
    .map((segment) => `${segment.fieldText(3)}|${segment.fieldText(4)}`);
  expect(pairs).toEqual(['ORG^ORG^L|1', 'ORG^ORG^L|2', 'ORG^ORG^L|3']);
  expect(new Set(pairs).size).toBe(3);
});
