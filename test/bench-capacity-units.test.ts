/**
 * The cost model's write pricing (bench/capacity-units.ts): DynamoDB write units from the item before
 * and after a write, every index entry priced as its own write (projection ALL), never a call count.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { itemWriteUnits } from '../bench/capacity-units';
import { Tables } from '../lib/config/service';

type Item = Record<string, AttributeValue>;
const payload = (bytes: number): AttributeValue => ({ S: 'x'.repeat(bytes) });

/** A results-table item of about `kb` KB (just under), in the byPatient index when `indexed`. */
function resultItem(kb: number, indexed: boolean, extra: Item = {}): Item {
  return {
    pk: { S: 'RESULT#r1' },
    sk: { S: 'VERSION#0001' },
    ...(indexed ? { patientPk: { S: 'PATIENT#p1' }, patientSk: { S: 'RESULT#0001' } } : {}),
    data: payload(kb * 1024 - 200),
    ...extra,
  };
}

describe('itemWriteUnits', () => {
  it('a new 3 KB item with a global index entry: 3 for the table and 3 for the index', () => {
    expect(itemWriteUnits(Tables.results, undefined, resultItem(3, true), false)).toEqual({ table: 3, index: 3 });
  });

  it('a new 3 KB item outside every index: 3, nothing for the index', () => {
    expect(itemWriteUnits(Tables.results, undefined, resultItem(3, false), false)).toEqual({ table: 3, index: 0 });
  });

  it('an update that takes the item out of the index pays the old index entry in full', () => {
    expect(itemWriteUnits(Tables.results, resultItem(3, true), resultItem(3, false), false)).toEqual({ table: 3, index: 3 });
  });

  it('an update of another attribute of an indexed item rewrites the index entry (the larger of before and after)', () => {
    const before = resultItem(2, true);
    const after = resultItem(2, true, { note: payload(1100) });
    expect(itemWriteUnits(Tables.results, before, after, false)).toEqual({ table: 3, index: 3 });
  });

  it('moving the index key writes the new entry and deletes the old one', () => {
    const before = resultItem(1, true);
    const after = { ...resultItem(1, true), patientPk: { S: 'PATIENT#p2' } };
    expect(itemWriteUnits(Tables.results, before, after, false)).toEqual({ table: 1, index: 2 });
  });

  it('a write whose condition failed costs the item as it is (at least 1), no index write', () => {
    expect(itemWriteUnits(Tables.results, resultItem(3, true), resultItem(3, true), true)).toEqual({ table: 3, index: 0 });
    expect(itemWriteUnits(Tables.results, undefined, undefined, true)).toEqual({ table: 1, index: 0 });
  });

  it('a local index counts when the item carries its sort key', () => {
    const entry: Item = { pk: { S: 'PATIENT#p1' }, sk: { S: 'NOTE#n1' }, timeline: { S: '2024-03-01' }, data: payload(100) };
    expect(itemWriteUnits(Tables.chart, undefined, entry, false)).toEqual({ table: 1, index: 1 });
    const { timeline: _timeline, ...unindexed } = entry;
    expect(itemWriteUnits(Tables.chart, undefined, unindexed, false)).toEqual({ table: 1, index: 0 });
  });
});
