/**
 * Compiles the request JSON Schemas into validators that need no ajv at cold start (ajv is in no
 * Lambda bundle). Run `npm run schemas` after changing a schema; `test/schemas.test.ts` fails when a
 * generated validator is out of date with its schema.
 *
 * Each entry: schemas/<name>.schema.json -> lib/<domain>/generated/<name>.validator.js (+ .d.ts),
 * in one of two forms, whichever is smaller bundled and minified (compileSchemaForms, esbuild as in
 * scripts/build.ts; `npm run schemas` prints both sizes):
 * - interpreted: the schema without annotations as data, handed to lib/schemas/schema-interpreter.ts
 *   (one shared runtime, ~6 KB minified, with lib/schemas/string-formats.ts), which reproduces ajv's
 *   verdict and errors for exactly the keywords the schemas use; any other keyword, a `$ref` with
 *   siblings or out of the document, an unknown format... fails the compile (checkInterpretable).
 *   Which `$ref`s ajv calls as functions (their errors' schemaPaths start at `#`) and which it
 *   inlines (schemaPaths from the `$ref`) is read from ajv's own compile of the schema (calledRefs).
 * - standalone: ajv's standalone code, compacted (refs as calls with the inlined schemaPaths
 *   restored, one push-error helper, schema constants pruned); it requires ajv's ucs2length and
 *   its formats from lib/schemas (date-format.ts alone when only `date` is used).
 * Formats: lib/schemas/string-formats.ts and date-format.ts carry ajv-formats' (full mode) date,
 * date-time and email; checkStringFormats compares them with the installed ajv-formats on every
 * compile (email: the same regular expression; the functions: the same answer on ~14,500 strings
 * around every calendar, clock, offset and separator boundary).
 *
 * Decision (issue 31 row 31.5, measured 2026-11-26, esbuild 0.28.2, LAMBDA_BUNDLE_OPTIONS): the lab
 * result validator was 35.85 KB minified in five intake bundles (receiveTestData, receiveHl7,
 * routeHeldRecord, receiveFhirBundle, receiveFhirDiagnosticReport), the form packet's 9.2 KB.
 * (a) Further compaction of ajv's code cannot reach the 15 KB target: with every error statement
 *     of the compact code removed outright (no error reporting at all) it still minifies to 20.9 KB
 *     (39.8 KB as shipped, same measure); ajv writes each property's checks out in full.
 * (b) Interpreting the schema as data: chosen. Lab result: 5.71 KB data + 6.12 KB interpreter +
 *     0.94 KB formats = 12.8 KB in each of the five bundles (-23.9 KB each; receiveFhirBundle,
 *     which also carries the form packet, -32.2 KB: its form packet validator is now 1.26 KB of
 *     data beside the same interpreter). Form packet alone 8.3 KB (receiveFormIntakeScope,
 *     receiveFhirQuestionnaireResponse: -1.2 KB). The inbox route (1.08 KB) and patient search
 *     (3.4 KB) schemas stay standalone: the interpreter would add ~6 KB to routeInboxPacket,
 *     searchInboxPatients and searchHeldPatients (unchanged, +0.1 KB of module wrapper).
 *     Speed: 0.5-0.7x ajv's code, 53-88k validations/s of an 8-result lab result against
 *     105-152k/s (11-19 us against 7-10 us; each bundle minified, alternating runs of 1 s, a
 *     shared 2-core machine); module load and first validation ~0.4 ms slower (median of 41
 *     fresh processes, interleaved; property schemas are compiled on first use).
 * Equivalence is the bar: test/schemas-compact-equivalence.test.ts compares every shipped
 * validator with ajv compiled at test time from the schema file (allErrors, strict,
 * allowUnionTypes, ajv-formats) on ~27,000 bodies (mutations of hand-written bodies and bodies
 * generated from each schema: 12,683 for the lab result, 9,121 of them invalid), error list as
 * JSON text, and requires every error site of ajv's code for the schema to be hit (lab result: all
 * 170 reachable).
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { SchemaEnv } from 'ajv/dist/compile';
import { _Code } from 'ajv/dist/compile/codegen/code';
import { inlineRef } from 'ajv/dist/compile/resolve';
import standaloneCode from 'ajv/dist/standalone';
import { buildSync } from 'esbuild';
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
 * keywords it knows (INTERPRETED_KEYWORDS), a `$ref` alone in its schema (beside `definitions` at most) and pointing into the same
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
    if (Object.keys(node).some((key) => key !== '$ref' && key !== 'definitions')) fail('$ref beside other keywords');
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

/**
 * ajv's messages for keywords whose message is a function of the error's params alone (ajv 8
 * lib/vocabularies). A call site may leave the message out only when this table, run at compile
 * time on that site's literal params, gives exactly the message ajv wrote there.
 */
const ERROR_MESSAGE_CODE: Record<string, string> = {
  type: `(p) => "must be " + p.type`,
  required: `(p) => "must have required property '" + p.missingProperty + "'"`,
  minLength: `(p) => "must NOT have fewer than " + p.limit + " characters"`,
  maxLength: `(p) => "must NOT have more than " + p.limit + " characters"`,
  minItems: `(p) => "must NOT have fewer than " + p.limit + " items"`,
  maxItems: `(p) => "must NOT have more than " + p.limit + " items"`,
  minProperties: `(p) => "must NOT have fewer than " + p.limit + " properties"`,
  maxProperties: `(p) => "must NOT have more than " + p.limit + " properties"`,
  pattern: `(p) => 'must match pattern "' + p.pattern + '"'`,
  format: `(p) => 'must match format "' + p.format + '"'`,
};
const errorMessages = Object.fromEntries(
  Object.entries(ERROR_MESSAGE_CODE).map(([keyword, code]) => [keyword, new Function(`return ${code};`)() as (params: unknown) => string]),
);

/**
 * The helper the compact code appends each error with (same object, same key order as ajv's);
 * with the messages of `keywords` (those whose message some call site leaves out).
 */
function pushErrorHelper(keywords: Set<string>): string {
  const push = `  const err = { instancePath, schemaPath, keyword, params, message };
  if (vErrors === null) return [err];
  vErrors.push(err);
  return vErrors;
}`;
  if (keywords.size === 0) return `function pushError(vErrors, instancePath, schemaPath, keyword, params, message) {\n${push}`;
  const table = [...keywords].sort().map((k) => `  ${k}: ${ERROR_MESSAGE_CODE[k]},`);
  return `const errorMessages = {\n${table.join('\n')}\n};\nfunction pushError(vErrors, instancePath, schemaPath, keyword, params, message = errorMessages[keyword](params)) {\n${push}`;
}

/** The value of a generated expression when it is a literal (no names), else undefined. */
function literalValue(expression: string): { value: unknown } | undefined {
  try {
    return { value: new Function(`"use strict"; return (${expression});`)() as unknown };
  } catch {
    return undefined;
  }
}

/** True when the message ajv wrote is what errorMessages gives for the same literal params. */
function messageFollowsFromParams(keyword: string, params: string, message: string): boolean {
  const render = errorMessages[JSON.parse(keyword) as string];
  const literalParams = literalValue(params);
  const literalMessage = literalValue(message);
  return !!render && !!literalParams && !!literalMessage && render(literalParams.value) === literalMessage.value;
}

/**
 * ajv writes every error as `const errN = {instancePath,schemaPath,keyword,params,message};
 * if(vErrors === null){vErrors = [errN];}else {vErrors.push(errN);}errors++;` (~270 bytes, 252
 * times in the lab result validator). The compact form calls a helper (pushErrorHelper) instead: the same
 * object in the same array, the same count; the message is left to the helper where it follows
 * from the (literal) params as checked at compile time.
 */
const AJV_ERROR_STATEMENT =
  /const (err\d+) = \{instancePath(?::(.*?))?,schemaPath:("[^"]*"),keyword:("[^"]*"),params:(\{.*?\}),message:((?:"(?:[^"\\]|\\.)*"\+?)+)\};if\(vErrors === null\)\{vErrors = \[\1\];\}else \{vErrors\.push\(\1\);\}errors\+\+;/g;

/** The arguments of pushError for one ajv error statement (instancePath, schemaPath, keyword, params, message). */
function pushErrorArguments(statement: string, instancePath: string | undefined, fields: string[]): string[] {
  const args = [instancePath ?? 'instancePath', ...fields.slice(0, 4)];
  // a lazily matched field stays inside its own statement
  if (args.some((f) => /const err\d+ = |vErrors|;/.test(f))) throw new Error(`unexpected ajv error statement: ${statement.slice(0, 200)}`);
  return args;
}

/**
 * The code with each ajv error statement (of exactly the five usual fields) as a pushError call,
 * and the helper. A keyword's message is left to the helper when at least 3 call sites can leave
 * it out (fewer would not pay for its entry in the table).
 */
function withPushErrorHelper(code: string): string {
  for (const name of ['pushError', 'errorMessages']) if (code.includes(name)) throw new Error(`generated code already uses the name ${name}`);
  const derivable = new Map<string, number>();
  for (const [statement, , instancePath, ...fields] of code.matchAll(AJV_ERROR_STATEMENT)) {
    const [, , keyword, params, message] = pushErrorArguments(statement, instancePath, fields);
    if (messageFollowsFromParams(keyword!, params!, message!)) derivable.set(keyword!, (derivable.get(keyword!) ?? 0) + 1);
  }
  const derived = new Set([...derivable].filter(([, sites]) => sites >= 3).map(([keyword]) => JSON.parse(keyword) as string));
  const out = code.replace(AJV_ERROR_STATEMENT, (statement: string, _name: string, instancePath: string | undefined, ...fields: string[]) => {
    const args = pushErrorArguments(statement, instancePath, fields);
    if (derived.has(JSON.parse(args[2]!) as string) && messageFollowsFromParams(args[2]!, args[3]!, args[4]!)) args.pop();
    return `vErrors = pushError(vErrors, ${args.join(', ')});errors++;`;
  });
  return `${out}\n${pushErrorHelper(derived)}`;
}

/** The index just past the JSON value starting at `start` (objects, arrays, strings, literals). */
function jsonValueEnd(code: string, start: number): number {
  let depth = 0;
  for (let i = start; i < code.length; i++) {
    const c = code[i];
    if (c === '"') {
      for (i++; code[i] !== '"'; i++) if (code[i] === '\\') i++;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    if (depth === 0 && (c === '}' || c === ']' || c === '"')) return i + 1;
  }
  throw new Error('unterminated JSON value in generated code');
}

/**
 * ajv declares each compiled (sub)schema as `const schemaN = {...}` (the lab result's whole
 * schema, ~10 KB, in every bundle) though the code reads only a few values of them (the `type`
 * list of a union type, an `enum` list, for an error's params). Each declaration keeps just the
 * paths the code reads, the same values at the same paths; one read by nothing is dropped.
 */
function withPrunedSchemaConstants(code: string): string {
  const declaration = /const (schema\d+) = /g;
  let out = '';
  let from = 0;
  for (let m = declaration.exec(code); m; m = declaration.exec(code)) {
    const name = m[1]!;
    const valueStart = m.index + m[0].length;
    const valueEnd = jsonValueEnd(code, valueStart);
    if (code[valueEnd] !== ';') throw new Error(`${name}: unexpected declaration`);
    const value = JSON.parse(code.slice(valueStart, valueEnd)) as unknown;
    const rest = code.slice(0, m.index) + code.slice(valueEnd + 1);
    const reads = [...rest.matchAll(new RegExp(`\\b${name}\\b((?:\\.[A-Za-z_$][\\w$]*|\\["[^"\\\\]*"\\])*)`, 'g'))].map((r) =>
      [...r[1]!.matchAll(/\.([A-Za-z_$][\w$]*)|\["([^"\\]*)"\]/g)].map((k) => k[1] ?? k[2]!),
    );
    out += code.slice(from, m.index);
    from = valueEnd + 1;
    if (reads.length === 0) continue;
    if (reads.some((keys) => keys.length === 0)) {
      out += code.slice(m.index, valueEnd + 1);
      continue;
    }
    const kept: Record<string, unknown> = {};
    for (const keys of reads) {
      let source = value as Record<string, unknown>;
      let target = kept;
      keys.forEach((key, i) => {
        if (!source || typeof source !== 'object' || !(key in source)) throw new Error(`${name}.${keys.join('.')} is not in the schema`);
        if (i === keys.length - 1) target[key] = source[key];
        else {
          target = (target[key] ??= {}) as Record<string, unknown>;
          source = source[key] as Record<string, unknown>;
        }
      });
    }
    out += `const ${name} = ${JSON.stringify(kept)};`;
  }
  return out + code.slice(from);
}

/**
 * With inlineRefs off, a definition ajv used to inline is its own function, whose error
 * schemaPaths start at its own root (`#/pattern`); inlined, they started at the $ref
 * (`#/definitions/id/pattern`), which lib/results/validation.ts reads to word its messages. Each
 * such function's schemaPaths get their $ref back, so every error is the same object as before.
 */
function restoreInlinedSchemaPaths(root: SchemaEnv): void {
  for (const [ref, env] of Object.entries(root.refs)) {
    if (!(env instanceof SchemaEnv) || !inlineRef(env.schema, true)) continue;
    const fragment = ref.slice(ref.indexOf('#'));
    if (!fragment.startsWith('#/') || !env.validate?.source) throw new Error(`unexpected $ref ${ref}`);
    const source = env.validate.source;
    if (source.validateCode.includes('schemaPath:"#"')) throw new Error(`${ref}: an error at the definition's root schemaPath`);
    source.validateCode = source.validateCode.split('schemaPath:"#/').join(`schemaPath:"${fragment}/`);
  }
}

/** Every `format` a schema uses. */
function formatsUsed(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => formatsUsed(n, found));
  else if (node && typeof node === 'object')
    for (const [key, value] of Object.entries(node)) {
      if (key === 'format' && typeof value === 'string') found.add(value);
      else formatsUsed(value, found);
    }
  return found;
}

/** `lib/schemas/<module>` as a require path from the directory of `output`. */
function requirePath(output: string, module: string): string {
  const relative = path
    .relative(path.dirname(path.join(root, output)), path.join(root, 'lib/schemas', module))
    .split(path.sep)
    .join('/');
  return relative.startsWith('.') ? relative : `./${relative}`;
}

const generatedHeader = (schemaFile: string): string => `/* eslint-disable */\n// generated by scripts/compile-schemas.ts from ${schemaFile}: do not edit\n`;

/** The schema file without its annotations, checked to be one the interpreter runs as ajv does. */
function readSchema(schemaFile: string): Record<string, unknown> {
  checkStringFormats();
  const schema = withoutAnnotations(JSON.parse(readFileSync(path.join(root, schemaFile), 'utf8'))) as Record<string, unknown>;
  checkInterpretable(schema);
  return schema;
}

/** The interpreted form: the schema (without annotations, $schema and $id) as data handed to lib/schemas/schema-interpreter.ts. */
export function interpretedModule(schemaFile: string, output: string): string {
  const schema = readSchema(schemaFile);
  const data = Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema' && key !== '$id'));
  return [
    `${generatedHeader(schemaFile)}"use strict";`,
    `const { interpretedValidator } = require(${JSON.stringify(requirePath(output, 'schema-interpreter'))});`,
    `const validate = interpretedValidator(${JSON.stringify(data)}, ${JSON.stringify(calledRefs(schema))});`,
    'module.exports = validate;',
    'module.exports.default = validate;',
    '',
  ].join('\n');
}

/**
 * The standalone form: ajv's standalone code, compacted (each $ref'd definition one function, errors
 * appended by one helper, schema constants pruned); its function formats required from
 * lib/schemas/string-formats.ts (not ajv-formats, every format).
 */
export function standaloneModule(schemaFile: string, output: string): string {
  const schema = readSchema(schemaFile);
  // each format as ajv's code calls it ({ validate } or a regular expression), from the smallest module that has it
  const stringFormats = `require(${JSON.stringify(requirePath(output, 'string-formats'))})`;
  const formatCode: Record<string, string> = {
    date: `{ validate: require(${JSON.stringify(requirePath(output, 'date-format'))}).date }`,
    'date-time': `{ validate: ${stringFormats}.STRING_FORMATS["date-time"] }`,
    email: `${stringFormats}.EMAIL`,
  };
  const used = [...formatsUsed(schema)].sort();
  const formatsCode = `({ ${used.map((name) => `${JSON.stringify(name)}: ${formatCode[name]!}`).join(', ')} })`;
  // code.formats set before addFormats: ajv-formats keeps it instead of its require("ajv-formats/dist/formats")
  const ajv = new Ajv({
    code: { source: true, esm: false, formats: new _Code(formatsCode) },
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    inlineRefs: false,
  });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  restoreInlinedSchemaPaths((validate as unknown as { schemaEnv: SchemaEnv }).schemaEnv.root);
  const source = standaloneCode(ajv, validate);
  if (source.includes('ajv-formats')) throw new Error(`${schemaFile}: the standalone validator still requires ajv-formats`);
  return `${generatedHeader(schemaFile)}${withPrunedSchemaConstants(withPushErrorHelper(source))}\n`;
}

/** Bytes of `code` bundled with what it requires (the interpreter, ajv's ucs2length), minified as in the Lambda bundles (scripts/build.ts). */
export function bundledSize(code: string, output: string): number {
  const result = buildSync({
    stdin: { contents: code, resolveDir: path.dirname(path.join(root, output)), loader: 'js', sourcefile: output },
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    legalComments: 'none',
    write: false,
  });
  return result.outputFiles[0]!.contents.length;
}

/**
 * The generated module of `schemaFile` and both forms' bundled sizes: the interpreted form unless the
 * standalone code is smaller than the schema's data and the interpreter together (a small schema,
 * in a function carrying no other validator, pays less for ajv's code than for the interpreter).
 */
export function compileSchemaForms(schemaFile: string): { code: string; form: 'interpreted' | 'standalone'; interpreted: number; standalone: number } {
  const output = CompiledSchemas.find((s) => s.schema === schemaFile)?.output;
  if (!output) throw new Error(`${schemaFile} is not in CompiledSchemas`);
  const interpretedCode = interpretedModule(schemaFile, output);
  const standaloneText = standaloneModule(schemaFile, output);
  const interpreted = bundledSize(interpretedCode, output);
  const standalone = bundledSize(standaloneText, output);
  return standalone < interpreted
    ? { code: standaloneText, form: 'standalone', interpreted, standalone }
    : { code: interpretedCode, form: 'interpreted', interpreted, standalone };
}

export function compileSchema(schemaFile: string): string {
  return compileSchemaForms(schemaFile).code;
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
      const compiled = compileSchemaForms(schema);
      writeFileSync(out, compiled.code);
      writeFileSync(out.replace(/\.js$/, '.d.ts'), declaration);
      io.out(`${schema} -> ${output} (${compiled.form}; bundled, minified: interpreted ${compiled.interpreted} B, standalone ${compiled.standalone} B)\n`);
    }
    return 0;
  });
}

if (require.main === module) runMain('schemas', main);
