/**
 * bench/partitions.ts counts the writes each partition key takes, the table's and every global
 * index's: an item moving from one index partition to another writes both (leave and enter), once
 * per index holding it.
 */
import { Tables, type TableId } from '../lib/config/service';
import { WriteCounter } from '../bench/partitions';

const physical = Object.fromEntries(Object.keys(Tables).map((id) => [id, `t-${id}`])) as Record<TableId, string>;
const packet = (statePk: string) => ({ pk: { S: 'PACKET#p1' }, sk: { S: 'PACKET' }, statePk: { S: statePk }, stateSk: { S: `2026#p1` } });

describe('WriteCounter', () => {
  it('a packet moved from one state partition to another: leave and enter in each state index, one table write per put', () => {
    const counter = new WriteCounter(physical);
    counter.record('PutItemCommand', { TableName: 't-forms', Item: packet('STATE#pending_match#01') });
    counter.record('PutItemCommand', { TableName: 't-forms', Item: packet('STATE#pending_review#07') });
    const writes = Object.fromEntries([...counter.counts.values()].map((c) => [`${c.index ?? 'table'}|${c.key}`, c.writes]));
    const indexes = Tables.forms.indexes.map((i) => i.name);
    expect(indexes.length).toBeGreaterThan(1);
    const expected: Record<string, number> = { 'table|PACKET#p1': 2 };
    for (const index of indexes) {
      expected[`${index}|STATE#pending_match#01`] = 2; // enter, then leave
      expected[`${index}|STATE#pending_review#07`] = 1;
    }
    expect(writes).toEqual(expected);
  });

  it('an update that leaves the index key alone writes the same index partition again', () => {
    const counter = new WriteCounter(physical);
    counter.record('PutItemCommand', { TableName: 't-forms', Item: packet('STATE#pending_match#01') });
    counter.record('UpdateItemCommand', {
      TableName: 't-forms',
      Key: { pk: { S: 'PACKET#p1' }, sk: { S: 'PACKET' } },
      UpdateExpression: 'SET queueAttempts = :n',
      ExpressionAttributeValues: { ':n': { N: '1' } },
    });
    for (const index of Tables.forms.indexes) {
      expect([...counter.counts.values()].find((c) => c.index === index.name && c.key === 'STATE#pending_match#01')?.writes).toBe(2);
    }
  });
});
