import { Tables, type TableId } from '../config/service';
import { TIMELINE_INDEX } from '../chart/chart-items';
import { RESULTS_BY_PATIENT_INDEX } from '../results/result-items';
import { TABLE_NAME_ENV, tableName } from './table-names';

describe('table names', () => {
  it('each table is named by the environment variable of its definition (lib/config/tables.ts)', () => {
    const ids = Object.keys(Tables) as TableId[];
    expect(Object.keys(TABLE_NAME_ENV).sort()).toEqual([...ids].sort());
    for (const id of ids) expect([id, TABLE_NAME_ENV[id]]).toEqual([id, Tables[id].env]);
  });

  it('the index names the stores query without reading Tables are those of Tables', () => {
    expect(Tables.chart.indexes.map((i) => i.name)).toContain(TIMELINE_INDEX);
    expect(Tables.results.indexes.map((i) => i.name)).toContain(RESULTS_BY_PATIENT_INDEX);
  });

  it('tableName reads that variable', () => {
    const saved = process.env[Tables.forms.env];
    process.env[Tables.forms.env] = 'interop-unit-forms';
    try {
      expect(tableName('forms')).toBe('interop-unit-forms');
    } finally {
      if (saved === undefined) delete process.env[Tables.forms.env];
      else process.env[Tables.forms.env] = saved;
    }
  });
});
