/**
 * A JSON Schema (draft-07) validator for exactly the keywords the request schemas use, giving what
 * ajv 8 (allErrors, strict, allowUnionTypes, ajv-formats) gives: the same verdict and the same
 * error objects in the same order (instancePath, schemaPath, keyword, params, message; propertyName
 * inside propertyNames). scripts/compile-schemas.ts writes each schema (without annotations) as data
 * into lib/<domain>/generated/<name>.validator.js, which hands it to `interpretedValidator`; the
 * compile step refuses a schema using any other keyword, and test/schemas-compact-equivalence.test.ts
 * compares every validator with ajv compiled from the same schema, error for error. ajv is not in any
 * Lambda bundle: the schema becomes closures once, when the module loads (well under a millisecond).
 *
 * ajv's order, reproduced here: a schema that is only a `$ref` is the referenced schema; otherwise
 * an up-front type check (unless the schema has a single type with keywords of that type, whose
 * group then reports the type error), the keywords for any type (enum, oneOf, if/then/else), then
 * the string (maxLength, minLength, pattern, format), array (maxItems, minItems, items) and object
 * (maxProperties, minProperties, required, propertyNames, additionalProperties, dependencies,
 * properties) groups, each only for data of its type. A referenced definition with no `$ref` of its
 * own is inlined by ajv (its errors' schemaPaths start at the `$ref`, e.g. `#/definitions/id/pattern`);
 * one with `$refs` is a function of its own, whose schemaPaths start at `#`: the compile step lists
 * those (`calledRefs`, decided by ajv's own rule).
 */
import type { CompiledValidator } from './compiled-validator';
import { STRING_FORMATS } from './string-formats';

/** A JSON Schema object (annotations removed), as the generated validators carry it. */
export type SchemaNode = { [keyword: string]: unknown };

/** One error, as ajv writes it (field order kept: the errors are compared as JSON). */
export interface SchemaError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
  propertyName?: string;
}

/** Checks `data` at `instancePath`, appending its errors; `propertyName` is set inside propertyNames. */
type Check = (data: unknown, instancePath: string, errors: SchemaError[], propertyName?: string) => void;

/** The keywords the interpreter knows, by the group ajv evaluates them in (the compile step refuses others). */
export const INTERPRETED_KEYWORDS = {
  core: ['$ref', '$schema', '$id', 'definitions', 'type'],
  any: ['enum', 'oneOf', 'if', 'then', 'else'],
  string: ['maxLength', 'minLength', 'pattern', 'format'],
  array: ['maxItems', 'minItems', 'items'],
  object: ['maxProperties', 'minProperties', 'required', 'propertyNames', 'additionalProperties', 'dependencies', 'properties'],
} as const;

type TypedGroup = 'string' | 'array' | 'object';
const TYPED_GROUPS: readonly string[] = ['string', 'array', 'object'];

const IS_TYPE: Record<string, (data: unknown) => boolean> = {
  string: (d) => typeof d === 'string',
  number: (d) => typeof d === 'number' && isFinite(d),
  integer: (d) => typeof d === 'number' && !(d % 1) && !isNaN(d) && isFinite(d),
  boolean: (d) => typeof d === 'boolean',
  null: (d) => d === null,
  array: (d) => Array.isArray(d),
  object: (d) => !!d && typeof d === 'object' && !Array.isArray(d),
};

/** Length in Unicode code points (ajv's ucs2length: a surrogate pair counts once). */
function codePoints(str: string): number {
  let length = 0;
  for (let pos = 0; pos < str.length; length++) {
    const value = str.charCodeAt(pos++);
    if (value >= 0xd800 && value <= 0xdbff && pos < str.length && (str.charCodeAt(pos) & 0xfc00) === 0xdc00) pos++;
  }
  return length;
}

const pointerEscape = (name: string): string => name.replace(/~/g, '~0').replace(/\//g, '~1');

function push(
  errors: SchemaError[],
  instancePath: string,
  schemaPath: string,
  keyword: string,
  params: Record<string, unknown>,
  message: string,
  propertyName?: string,
): void {
  const error: SchemaError = { instancePath, schemaPath, keyword, params, message };
  if (propertyName !== undefined) error.propertyName = propertyName;
  errors.push(error);
}

const run =
  (checks: Check[]): Check =>
  (data, path, errors, propertyName) => {
    for (let i = 0; i < checks.length; i++) checks[i]!(data, path, errors, propertyName);
  };

/**
 * A validator for `root`: `calledRefs` are the `$ref`s ajv compiles as functions of their own
 * (their errors' schemaPaths start at `#`); every other `$ref` is inlined. Its call signature and
 * `errors` are those of ajv's validate function (null when valid).
 */
export function interpretedValidator(root: SchemaNode, calledRefs: string[]): CompiledValidator {
  const called = new Map<string, Check>();

  function resolve(ref: string): SchemaNode {
    if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
    let node: unknown = root;
    for (const part of ref.slice(2).split('/')) node = (node as SchemaNode)[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')];
    if (!node || typeof node !== 'object') throw new Error(`unresolved $ref ${ref}`);
    return node as SchemaNode;
  }

  function calledCheck(ref: string): Check {
    let check = called.get(ref);
    if (!check) {
      // set before compiling so a definition referring to itself finds it
      called.set(ref, (data, path, errors) => check!(data, path, errors));
      check = compile(resolve(ref), '#');
      called.set(ref, check);
    }
    return check;
  }

  function compile(schema: SchemaNode, at: string): Check {
    if (typeof schema.$ref === 'string') {
      const ref = schema.$ref;
      if (!calledRefs.includes(ref)) return compile(resolve(ref), ref);
      // ajv's call: the function knows no propertyName
      let check: Check | undefined;
      return (data, path, errors) => (check ??= calledCheck(ref))(data, path, errors);
    }
    const checks: Check[] = [];
    const type = schema.type as string | string[] | undefined;
    const types = type === undefined ? [] : Array.isArray(type) ? type : [type];
    const has = (group: TypedGroup): boolean => INTERPRETED_KEYWORDS[group].some((k) => schema[k] !== undefined);
    const typeError: Check = (_data, path, errors, propertyName) => push(errors, path, `${at}/type`, 'type', { type }, `must be ${String(type)}`, propertyName);
    const typedGroupReportsType = types.length === 1 && TYPED_GROUPS.includes(types[0]!) && has(types[0] as TypedGroup);
    if (types.length > 0 && !typedGroupReportsType) {
      const matches = types.map((t) => IS_TYPE[t]!);
      checks.push((data, path, errors, propertyName) => {
        if (!matches.some((is) => is(data))) typeError(data, path, errors, propertyName);
      });
    }
    if (schema.enum !== undefined) checks.push(enumCheck(schema.enum as unknown[], at));
    if (schema.oneOf !== undefined) checks.push(oneOfCheck(schema.oneOf as SchemaNode[], at));
    if (schema.if !== undefined && (schema.then !== undefined || schema.else !== undefined)) checks.push(ifCheck(schema, at));
    for (const group of ['string', 'array', 'object'] as const) {
      if (!has(group)) continue;
      const groupChecks = group === 'string' ? stringChecks(schema, at) : group === 'array' ? arrayChecks(schema, at) : objectChecks(schema, at);
      const inner = groupChecks.length === 1 ? groupChecks[0]! : run(groupChecks);
      const is = IS_TYPE[group]!;
      const reportsType = typedGroupReportsType && types[0] === group;
      checks.push((data, path, errors, propertyName) => {
        if (is(data)) inner(data, path, errors, propertyName);
        else if (reportsType) typeError(data, path, errors, propertyName);
      });
    }
    return checks.length === 1 ? checks[0]! : run(checks);
  }

  function enumCheck(allowedValues: unknown[], at: string): Check {
    return (data, path, errors, propertyName) => {
      if (!allowedValues.some((v) => v === data))
        push(errors, path, `${at}/enum`, 'enum', { allowedValues }, 'must be equal to one of the allowed values', propertyName);
    };
  }

  function oneOfCheck(branches: SchemaNode[], at: string): Check {
    const checks = branches.map((branch, i) => compile(branch, `${at}/oneOf/${i}`));
    return (data, path, errors, propertyName) => {
      const before = errors.length;
      let valid = false;
      let passing: unknown = null;
      checks.forEach((check, i) => {
        const count = errors.length;
        check(data, path, errors, propertyName);
        const branchValid = errors.length === count;
        if (i > 0 && branchValid && valid) {
          valid = false;
          passing = [passing, i];
        } else if (branchValid) {
          valid = true;
          passing = i;
        }
      });
      if (valid) errors.length = before;
      else push(errors, path, `${at}/oneOf`, 'oneOf', { passingSchemas: passing }, 'must match exactly one schema in oneOf', propertyName);
    };
  }

  function ifCheck(schema: SchemaNode, at: string): Check {
    const condition = compile(schema.if as SchemaNode, `${at}/if`);
    const then = schema.then === undefined ? undefined : compile(schema.then as SchemaNode, `${at}/then`);
    const otherwise = schema.else === undefined ? undefined : compile(schema.else as SchemaNode, `${at}/else`);
    return (data, path, errors, propertyName) => {
      const conditionErrors: SchemaError[] = [];
      condition(data, path, conditionErrors, propertyName);
      const holds = conditionErrors.length === 0;
      const clause = holds ? then : otherwise;
      if (!clause) return;
      const before = errors.length;
      clause(data, path, errors, propertyName);
      if (errors.length !== before) {
        const failingKeyword = holds ? 'then' : 'else';
        push(errors, path, `${at}/if`, 'if', { failingKeyword }, `must match "${failingKeyword}" schema`, propertyName);
      }
    };
  }

  /** One check for the string keywords (the commonest schema: one call per string). */
  function stringChecks(schema: SchemaNode, at: string): Check[] {
    const max = schema.maxLength as number | undefined;
    const min = schema.minLength as number | undefined;
    const pattern = schema.pattern as string | undefined;
    const regExp = pattern === undefined ? undefined : new RegExp(pattern, 'u');
    const format = schema.format as string | undefined;
    const hasFormat = format === undefined ? undefined : STRING_FORMATS[format];
    if (format !== undefined && !hasFormat) throw new Error(`unsupported format ${format}`);
    return [
      (data, path, errors, propertyName) => {
        const text = data as string;
        // code points lie between half the UTF-16 length and the length: counted only when that decides
        if ((max !== undefined && text.length > max) || (min !== undefined && text.length / 2 < min)) {
          const length = codePoints(text);
          if (max !== undefined && length > max)
            push(errors, path, `${at}/maxLength`, 'maxLength', { limit: max }, `must NOT have more than ${max} characters`, propertyName);
          if (min !== undefined && length < min)
            push(errors, path, `${at}/minLength`, 'minLength', { limit: min }, `must NOT have fewer than ${min} characters`, propertyName);
        }
        if (regExp && !regExp.test(text)) push(errors, path, `${at}/pattern`, 'pattern', { pattern }, `must match pattern "${pattern}"`, propertyName);
        if (hasFormat && !hasFormat(text)) push(errors, path, `${at}/format`, 'format', { format }, `must match format "${format}"`, propertyName);
      },
    ];
  }

  function arrayChecks(schema: SchemaNode, at: string): Check[] {
    const checks: Check[] = [];
    const max = schema.maxItems as number | undefined;
    const min = schema.minItems as number | undefined;
    if (max !== undefined)
      checks.push((data, path, errors, propertyName) => {
        if ((data as unknown[]).length > max)
          push(errors, path, `${at}/maxItems`, 'maxItems', { limit: max }, `must NOT have more than ${max} items`, propertyName);
      });
    if (min !== undefined)
      checks.push((data, path, errors, propertyName) => {
        if ((data as unknown[]).length < min)
          push(errors, path, `${at}/minItems`, 'minItems', { limit: min }, `must NOT have fewer than ${min} items`, propertyName);
      });
    if (schema.items !== undefined) {
      const item = compile(schema.items as SchemaNode, `${at}/items`);
      checks.push((data, path, errors, propertyName) => {
        const array = data as unknown[];
        for (let i = 0; i < array.length; i++) item(array[i], `${path}/${i}`, errors, propertyName);
      });
    }
    return checks;
  }

  function objectChecks(schema: SchemaNode, at: string): Check[] {
    const checks: Check[] = [];
    type Data = Record<string, unknown>;
    const max = schema.maxProperties as number | undefined;
    const min = schema.minProperties as number | undefined;
    if (max !== undefined)
      checks.push((data, path, errors, propertyName) => {
        if (Object.keys(data as Data).length > max)
          push(errors, path, `${at}/maxProperties`, 'maxProperties', { limit: max }, `must NOT have more than ${max} properties`, propertyName);
      });
    if (min !== undefined)
      checks.push((data, path, errors, propertyName) => {
        if (Object.keys(data as Data).length < min)
          push(errors, path, `${at}/minProperties`, 'minProperties', { limit: min }, `must NOT have fewer than ${min} properties`, propertyName);
      });
    const required = schema.required as string[] | undefined;
    if (required !== undefined)
      checks.push((data, path, errors, propertyName) => {
        for (const missingProperty of required)
          if ((data as Data)[missingProperty] === undefined)
            push(errors, path, `${at}/required`, 'required', { missingProperty }, `must have required property '${missingProperty}'`, propertyName);
      });
    if (schema.propertyNames !== undefined) {
      const name = compile(schema.propertyNames as SchemaNode, `${at}/propertyNames`);
      checks.push((data, path, errors, propertyName) => {
        for (const key in data as Data) {
          const before = errors.length;
          name(key, path, errors, key);
          if (errors.length !== before)
            push(errors, path, `${at}/propertyNames`, 'propertyNames', { propertyName: key }, 'property name must be valid', propertyName);
        }
      });
    }
    const properties = Object.keys((schema.properties ?? {}) as Data).filter((p) => p !== '__proto__');
    const additional = schema.additionalProperties as boolean | SchemaNode | undefined;
    if (additional === false)
      checks.push((data, path, errors, propertyName) => {
        for (const additionalProperty in data as Data)
          if (!properties.includes(additionalProperty))
            push(
              errors,
              path,
              `${at}/additionalProperties`,
              'additionalProperties',
              { additionalProperty },
              'must NOT have additional properties',
              propertyName,
            );
      });
    else if (additional !== undefined && additional !== true) {
      const value = compile(additional, `${at}/additionalProperties`);
      checks.push((data, path, errors, propertyName) => {
        for (const key in data as Data) if (!properties.includes(key)) value((data as Data)[key], `${path}/${pointerEscape(key)}`, errors, propertyName);
      });
    }
    const dependencies = schema.dependencies as Record<string, string[]> | undefined;
    if (dependencies !== undefined)
      for (const [property, deps] of Object.entries(dependencies)) {
        if (deps.length === 0) continue;
        const depsText = deps.join(', ');
        const message = `must have ${deps.length === 1 ? 'property' : 'properties'} ${depsText} when property ${property} is present`;
        checks.push((data, path, errors, propertyName) => {
          if ((data as Data)[property] === undefined) return;
          for (const missingProperty of deps)
            if ((data as Data)[missingProperty] === undefined)
              push(
                errors,
                path,
                `${at}/dependencies`,
                'dependencies',
                { property, missingProperty, depsCount: deps.length, deps: depsText },
                message,
                propertyName,
              );
        });
      }
    // each property's schema compiled when a value first comes for it (a cold start compiles only what its request uses)
    const present = properties.map((property) => ({
      property,
      suffix: `/${pointerEscape(property)}`,
      schema: (schema.properties as Record<string, SchemaNode>)[property]!,
      at: `${at}/properties/${encodeURIComponent(pointerEscape(property))}`,
      check: undefined as Check | undefined,
    }));
    if (present.length > 0)
      checks.push((data, path, errors, propertyName) => {
        for (let i = 0; i < present.length; i++) {
          const entry = present[i]!;
          const value = (data as Data)[entry.property];
          if (value !== undefined) (entry.check ??= compile(entry.schema, entry.at))(value, path + entry.suffix, errors, propertyName);
        }
      });
    return checks;
  }

  const check = compile(root, '#');
  const validate: CompiledValidator = (data: unknown): boolean => {
    const errors: SchemaError[] = [];
    check(data, '', errors);
    validate.errors = errors.length === 0 ? null : (errors as NonNullable<CompiledValidator['errors']>);
    return errors.length === 0;
  };
  return validate;
}
