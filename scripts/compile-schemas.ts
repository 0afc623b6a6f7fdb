/**
 * Compiles the request JSON Schemas into standalone ajv validators (no ajv compile at cold start).
 * Run `npm run schemas` after changing a schema; `test/schemas.test.ts` fails when a generated
 * validator is out of date with its schema.
 *
 * Each entry: schemas/<name>.schema.json -> lib/<domain>/generated/<name>.validator.js (+ .d.ts)
 *
 * Formats: ajv-formats (full mode) defines them at compile time. Regex formats (email) are inlined
 * by ajv as regex literals; function formats (date, date-time) would make the standalone code
 * `require("ajv-formats/dist/formats")`, which puts all of ajv-formats (every format, ~7.5 KB)
 * into each Lambda bundle. Instead the validator carries the few functions its schema uses, copied
 * from ajv-formats' own source (LOCAL_FORMAT_CODE) and checked against the installed ajv-formats
 * on every compile (checkLocalFormats), so the generated code validates exactly as before.
 *
 * Size (issue 31 item 5: the lab result validator was ~70 KB of every lab intake bundle): the
 * shipped code is compact (CompileOptions refs 'calls'): each $ref'd definition is one function
 * called wherever it is referenced (ajv's default copies a definition without $refs into every
 * place that references it), with the error schemaPaths the inlined copies had; each error is
 * appended by one helper (its message left to the helper where it follows from literal params);
 * schema constants keep only the values the code reads. test/schemas-compact-equivalence.test.ts
 * checks the compact validators against ajv's inlined form (refs 'inlined'), error for error.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { SchemaEnv } from 'ajv/dist/compile';
import { inlineRef } from 'ajv/dist/compile/resolve';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readSingleCommand, runCli, runMain, type CliIo } from '../lib/admin/cli-runner';
import { UsageError } from '../lib/admin/cli-options';
import { INTERPRETED_KEYWORDS } from '../lib/schemas/schema-interpreter';
import { EMAIL, STRING_FORMATS } from '../lib/schemas/string-formats';

export const CompiledSchemas: Array<{ schema: string; output: string }> = [
  { schema: 'schemas/lab-result.schema.json', output: 'lib/results/generated/lab-result.validator.js' },
  { schema: 'schemas/form-packet.schema.json', output: 'lib/forms/generated/form-packet.validator.js' },
  { schema: 'schemas/inbox-route.schema.json', output: 'lib/forms/generated/inbox-route.validator.js' },
  { schema: 'schemas/inbox-patient-search.schema.json', output: 'lib/forms/generated/inbox-patient-search.validator.js' },
];

const root = path.resolve(__dirname, '..');

/** Strings around every boundary of the supported formats (calendar, leap years, leap seconds, offsets, separators). */
function formatSamples(): string[] {
  const dates: string[] = [];
  for (const year of ['0000', '0001', '1600', '1900', '1970', '2000', '2023', '2024', '2100', '9999'])
    for (let month = 0; month <= 13; month++)
      for (let day = 0; day <= 32; day++) dates.push(`${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`);
  const odd = [
    '',
    ' ',
    'x',
    '2024-1-01',
    '2024-01-1',
    '24-01-01',
    '2024/01/01',
    '2024-01-01 ',
    ' 2024-01-01',
    '2024-01-01\n',
    '２０２４-01-01',
    '+2024-01-01',
    '2024-0a-01',
    '2024-01-01T',
    'T12:00:00Z',
  ];
  const times: string[] = [];
  for (const clock of [
    '00:00:00',
    '12:34:56',
    '23:59:59',
    '23:59:60',
    '00:59:60',
    '22:59:60',
    '23:58:60',
    '24:00:00',
    '23:60:00',
    '12:00:61',
    '23:59:60.999',
    '12:00:00.5',
    '12:00:00.123456789',
    '12:00:00.',
    '1:00:00',
  ])
    for (const zone of [
      '',
      'Z',
      'z',
      '+00:00',
      '-00:00',
      '+01:00',
      '-01:00',
      '+0100',
      '+01',
      '+23:59',
      '+24:00',
      '+00:60',
      '-23:59',
      '+1:00',
      'Z ',
      '+00:00:00',
    ])
      times.push(clock + zone);
  const dateTimes: string[] = [];
  for (const d of ['2024-02-29', '2023-02-29', '2024-12-31', '1970-01-01', '2024-13-01'])
    for (const sep of ['T', 't', ' ', '\t', '\n', '_', 'TT', '']) for (const t of times) dateTimes.push(d + sep + t);
  return [...dates, ...odd, ...times, ...dateTimes];
}

/** Throws unless each format the interpreter carries (lib/schemas/string-formats.ts) is ajv-formats' (full mode): the same regular expression, or the same answer on every sample. */
export function checkStringFormats(): void {
  const reference = fullFormats as unknown as Record<string, RegExp | { validate: RegExp | ((s: string) => boolean) }>;
  const samples = [...formatSamples(), 'a@b.co', 'a.b@c-d.example.org', 'a..b@c.org', '@c.org', 'a@', 'a@b', 'A@B.ORG', 'a b@c.org'];
  for (const [name, mine] of Object.entries(STRING_FORMATS)) {
    const format = reference[name];
    const theirs = format instanceof RegExp ? format : format?.validate;
    if (!theirs) throw new Error(`format ${name} is not in ajv-formats`);
    if (theirs instanceof RegExp) {
      if (name !== 'email' || theirs.source !== EMAIL.source || theirs.flags !== EMAIL.flags)
        throw new Error(`format ${name}: the regular expression differs from ajv-formats'; update lib/schemas/string-formats.ts`);
      continue;
    }
    for (const sample of samples)
      if (mine(sample) !== theirs(sample))
        throw new Error(`format ${name} differs from ajv-formats on ${JSON.stringify(sample)}: update lib/schemas/string-formats.ts`);
  }
}

/** Keywords that only annotate (JSON Schema draft-07 "meta-data"): no effect on what validates or on the errors. */
const ANNOTATION_KEYWORDS = new Set(['title', 'description', '$comment', 'examples']);
/** Keywords whose value maps names to subschemas (the names are data, never keywords). */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependencies']);
/** Keywords whose value is a subschema or an array of subschemas. */
const SUBSCHEMA_KEYWORDS = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'not',
  'allOf',
  'anyOf',
  'oneOf',
]);

/**
 * The schema without its annotations. ajv embeds a schema object in the standalone code when the
 * code reads from it (e.g. the `type` list of a union type for an error's params), descriptions
 * and all; they are never read, so they only add bytes to every Lambda bundle carrying the
 * validator. Walks schema positions only: a property called `description` stays a property, and
 * `enum`/`const`/`default` values and `dependencies` name lists are copied as they are.
 */
export function withoutAnnotations(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutAnnotations);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATION_KEYWORDS.has(key)) continue;
    if (SCHEMA_MAP_KEYWORDS.has(key) && value && typeof value === 'object' && !Array.isArray(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, Array.isArray(sub) ? sub : withoutAnnotations(sub)]));
    else if (SUBSCHEMA_KEYWORDS.has(key)) out[key] = withoutAnnotations(value);
    else out[key] = value;
  }
  return out;
}

const INTERPRETED = new Set<string>(Object.values(INTERPRETED_KEYWORDS).flat());

/**
 * Throws unless lib/schemas/schema-interpreter.ts interprets `schema` as ajv does: only the
 * keywords it knows (INTERPRETED_KEYWORDS), a `$ref` alone in its schema and pointing into the same
 * document, `items` a single schema, `dependencies` name lists, enum values that are not objects,
 * formats it carries, no `$ref` under propertyNames, and a boolean schema only as
 * `additionalProperties`.
 */
export function checkInterpretable(schema: unknown, at = '#'): void {
  const fail = (why: string): never => {
    throw new Error(`${at}: ${why} (not interpreted by lib/schemas/schema-interpreter.ts; add it there and to its equivalence test)`);
  };
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) fail('a schema must be an object');
  const node = schema as Record<string, unknown>;
  for (const key of Object.keys(node)) if (!INTERPRETED.has(key)) fail(`keyword ${key}`);
  if (node.$ref !== undefined) {
    if (typeof node.$ref !== 'string' || !node.$ref.startsWith('#/')) fail(`$ref ${String(node.$ref)}`);
    if (Object.keys(node).length > 1) fail('$ref beside other keywords');
  }
  const sub = (value: unknown, where: string): void => checkInterpretable(value, `${at}/${where}`);
  for (const [name, def] of Object.entries((node.definitions ?? {}) as object)) sub(def, `definitions/${name}`);
  for (const [name, prop] of Object.entries((node.properties ?? {}) as object)) sub(prop, `properties/${name}`);
  for (const keyword of ['items', 'propertyNames', 'if', 'then', 'else']) if (node[keyword] !== undefined) sub(node[keyword], keyword);
  if (node.propertyNames !== undefined && JSON.stringify(node.propertyNames).includes('"$ref"')) fail('$ref under propertyNames');
  if (node.additionalProperties !== undefined && typeof node.additionalProperties !== 'boolean') sub(node.additionalProperties, 'additionalProperties');
  if (node.oneOf !== undefined) (node.oneOf as unknown[]).forEach((branch, i) => sub(branch, `oneOf/${i}`));
  if (node.dependencies !== undefined) for (const deps of Object.values(node.dependencies as object)) if (!Array.isArray(deps)) fail('a schema dependency');
  if (node.enum !== undefined && (node.enum as unknown[]).some((v) => v !== null && typeof v === 'object')) fail('an object in enum');
  if (node.format !== undefined && !STRING_FORMATS[node.format as string]) fail(`format ${String(node.format)}`);
}

/**
 * The `$ref`s ajv compiles as functions of their own (inlineRefs default: a definition with a $ref
 * inside is called, one without is inlined), from ajv's own compiled schema: their errors'
 * schemaPaths start at `#`, where an inlined definition's start at the `$ref`.
 */
function calledRefs(schema: object): string[] {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, code: { source: true } });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  const root = (validate as unknown as { schemaEnv: SchemaEnv }).schemaEnv.root;
  const called: string[] = [];
  for (const [ref, env] of Object.entries(root.refs)) {
    if (!(env instanceof SchemaEnv)) continue;
    if (inlineRef(env.schema, true)) throw new Error(`${ref}: ajv calls a definition it could inline`);
    called.push(ref.slice(ref.indexOf('#')));
  }
  return called.sort();
}

/** The generated module of `schemaFile`: its schema (without annotations, $schema and $id) handed to the interpreter. */
export function compileSchema(schemaFile: string): string {
  checkStringFormats();
  const schema = withoutAnnotations(JSON.parse(readFileSync(path.join(root, schemaFile), 'utf8'))) as Record<string, unknown>;
  checkInterpretable(schema);
  const called = calledRefs(schema);
  const data = Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema' && key !== '$id'));
  const output = CompiledSchemas.find((s) => s.schema === schemaFile)?.output;
  if (!output) throw new Error(`${schemaFile} is not in CompiledSchemas`);
  const runtime = path
    .relative(path.dirname(path.join(root, output)), path.join(root, 'lib/schemas/schema-interpreter'))
    .split(path.sep)
    .join('/');
  return [
    '/* eslint-disable */',
    `// generated by scripts/compile-schemas.ts from ${schemaFile}: do not edit`,
    '"use strict";',
    `const { interpretedValidator } = require(${JSON.stringify(runtime)});`,
    `const validate = interpretedValidator(${JSON.stringify(data)}, ${JSON.stringify(called)});`,
    'module.exports = validate;',
    'module.exports.default = validate;',
    '',
  ].join('\n');
}

const declaration = `import type { CompiledValidator } from '../../schemas/compiled-validator';\ndeclare const validate: CompiledValidator;\nexport = validate;\n`;

export function main(argv: string[], io: CliIo): Promise<number> {
  return runCli('schemas', io, async () => {
    const read = readSingleCommand(
      'schemas',
      {
        name: '',
        summary: 'Compiles the request JSON Schemas (schemas/) into standalone validators (lib/*/generated/).',
        options: {},
        examples: ['npm run schemas'],
      },
      argv,
      io,
    );
    if ('exitCode' in read) return read.exitCode;
    if (read.positionals.length > 0) throw new UsageError(`unexpected argument "${read.positionals[0]}"`);
    for (const { schema, output } of CompiledSchemas) {
      const out = path.join(root, output);
      mkdirSync(path.dirname(out), { recursive: true });
      writeFileSync(out, compileSchema(schema));
      writeFileSync(out.replace(/\.js$/, '.d.ts'), declaration);
      io.out(`${schema} -> ${output}\n`);
    }
    return 0;
  });
}

if (require.main === module) runMain('schemas', main);
