import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CompiledSchemas, checkInterpretable, compileSchema } from '../scripts/compile-schemas';

describe('build-time compiled validators', () => {
  it('lists the request schemas', () => {
    expect(CompiledSchemas.map((s) => s.schema)).toEqual(
      expect.arrayContaining([
        'schemas/lab-result.schema.json',
        'schemas/form-packet.schema.json',
        'schemas/inbox-route.schema.json',
        'schemas/inbox-patient-search.schema.json',
      ]),
    );
  });
  it.each(CompiledSchemas.map((s) => [s.schema, s.output]))('%s matches its generated validator %s (run `npm run schemas`)', (schema, output) => {
    const committed = readFileSync(path.resolve(__dirname, '..', output), 'utf8');
    expect(committed).toBe(compileSchema(schema));
  });
});

describe('the compile step refuses what lib/schemas/schema-interpreter.ts does not run as ajv does', () => {
  const string = { type: 'string' };
  it.each([
    ['a keyword it does not know', { type: 'number', minimum: 1 }, /keyword minimum/],
    ['patternProperties', { type: 'object', patternProperties: { '^x': string } }, /keyword patternProperties/],
    ['a nested unknown keyword', { type: 'object', properties: { a: { type: 'string', const: 'x' } } }, /#\/properties\/a: keyword const/],
    ['an unknown keyword in a definition', { definitions: { d: { uniqueItems: true } }, $ref: '#/definitions/d' }, /#\/definitions\/d: keyword uniqueItems/],
    [
      'a $ref beside other keywords',
      { definitions: { d: string }, type: 'object', properties: { a: { $ref: '#/definitions/d', minLength: 1 } } },
      /\$ref beside/,
    ],
    ['a $ref out of the document', { $ref: 'other.json#/definitions/d' }, /\$ref other\.json/],
    ['a format it does not carry', { type: 'string', format: 'uri' }, /format uri/],
    ['an object in enum', { enum: [{ a: 1 }] }, /an object in enum/],
    ['items as a list', { type: 'array', items: [string] }, /a schema must be an object/],
    ['a schema dependency', { type: 'object', dependencies: { a: string } }, /a schema dependency/],
    ['a $ref under propertyNames', { definitions: { d: string }, type: 'object', propertyNames: { $ref: '#/definitions/d' } }, /\$ref under propertyNames/],
    ['a boolean subschema', { type: 'object', properties: { a: false } }, /a schema must be an object/],
  ])('%s', (_what, schema, message) => {
    expect(() => checkInterpretable(schema)).toThrow(message);
  });

  it('accepts every request schema', () => {
    for (const { schema } of CompiledSchemas) expect(() => compileSchema(schema)).not.toThrow();
  });
});
