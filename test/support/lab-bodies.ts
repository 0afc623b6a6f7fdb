/** The JSON lab-result bodies the tests post (POST /receiveTestData): demo-lab's glucose for demo-patient-1. */

let seq = 0;
/** A value no other test run or test used: `<prefix>-<time>-<n>`. */
export const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${(++seq).toString(36)}`;

/** A valid single-result body with a unique accession; `overrides` replace fields of `data`, `top` add fields beside it. */
export function labBody(
  overrides: Record<string, unknown> = {},
  top: Record<string, unknown> = {},
): { data: Record<string, unknown> } & Record<string, unknown> {
  return {
    data: {
      senderID: 'demo-lab',
      patientID: 'demo-patient-1',
      accessionNumber: unique('ACC'),
      status: 'final',
      ResultedDateUTC: '2024-03-01T09:30:00Z',
      results: { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' },
      ...overrides,
    },
    ...top,
  };
}
