/**
 * ajv errors as the domain's field errors (lib/domain-errors.ts), one per failing field by JSON
 * pointer; lib/http renders them in problem+json `errors`, HL7 intake in ACK ERR segments.
 */
import type { ErrorObject } from 'ajv';
import { ValidationFailedError, type FieldError } from '../domain-errors';
import type { CompiledValidator } from './compiled-validator';

/**
 * One field error per failing field, by JSON pointer. Missing properties
 * point at the property itself. Messages never echo the submitted value (it may be PHI).
 */
export function fieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  const out = new Map<string, FieldError>();
  for (const e of errors ?? []) {
    let pointer = e.instancePath || '';
    let message = e.message ?? 'is invalid';
    const mapDepth = callerKeyDepth(e.schemaPath);
    if (e.keyword === 'required') {
      pointer = `${pointer}/${String((e.params as { missingProperty: string }).missingProperty)}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      // the property's name is the caller's text (it may be PHI): point at its parent instead
      message = 'has a property that is not allowed';
    } else if (mapDepth !== undefined) {
      // a value inside a free-form map: its key is the caller's text, so point at the map
      pointer = pointer
        .split('/')
        .slice(0, mapDepth + 1)
        .join('/');
      message = `has an entry that ${message}`;
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
    }
    const key = `${pointer}|${message}`;
    if (!out.has(key)) out.set(key, { pointer: pointer || '/', message });
  }
  return [...out.values()];
}

/**
 * When the failing schema sits under `additionalProperties`/`patternProperties` (a map whose keys
 * the caller chose), the number of instance path segments that are schema-defined; else undefined.
 */
function callerKeyDepth(schemaPath: string): number | undefined {
  const at = schemaPath.search(/\/(additionalProperties|patternProperties)\//);
  if (at < 0) return undefined;
  const prefix = schemaPath.slice(0, at);
  return (prefix.match(/\/properties\//g) ?? []).length + (prefix.match(/\/items(\/|$)/g) ?? []).length;
}

/** Runs a compiled validator; a failure is one ValidationFailedError listing every failing field (a 400). */
export function assertValid<T>(validate: CompiledValidator, value: unknown, what: string): T {
  if (!validate(value)) throw new ValidationFailedError(`${what} failed validation`, fieldErrors(validate.errors));
  return value as T;
}
