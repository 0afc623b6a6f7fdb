import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CompiledSchemas, compileSchema } from '../scripts/compile-schemas';

describe('build-time compiled validators', () => {
  it('has at least one schema listed', () => {
    expect(CompiledSchemas.length).toBeGreaterThanOrEqual(0);
  });
  it.each(CompiledSchemas.map((s) => [s.schema, s.output]))('%s matches its generated validator %s (run `npm run schemas`)', (schema, output) => {
    const committed = readFileSync(path.resolve(__dirname, '..', output), 'utf8');
    expect(committed).toBe(compileSchema(schema));
  });
});
