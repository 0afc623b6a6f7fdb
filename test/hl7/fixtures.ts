import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type FixtureName =
  | 'mdm-t02-note'
  | 'adt-a08-patient'
  | 'oru-r01-encounter'
  | 'oru-r01-assessment'
  | 'oru-r01-summary'
  | 'oru-r01-summary-empty'
  | 'adt-a08-encounter'
  | 'batch-summary';

export const FIXTURE_NAMES: readonly FixtureName[] = [
  'mdm-t02-note',
  'adt-a08-patient',
  'oru-r01-encounter',
  'oru-r01-assessment',
  'oru-r01-summary',
  'oru-r01-summary-empty',
  'adt-a08-encounter',
  'batch-summary',
];

/** A fixture message with CR segment terminators (stored with LF, see fixtures/README.md). */
export function loadFixture(name: FixtureName): string {
  return readFileSync(join(__dirname, 'fixtures', `${name}.hl7`), 'utf8').replace(/\n/g, '\r');
}
