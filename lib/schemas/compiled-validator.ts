import type { ErrorObject } from 'ajv';

/**
 * A validate function with ajv's contract and errors, built at build time (scripts/compile-schemas.ts
 * writes one per schema under lib/<domain>/generated/: the schema as data for
 * lib/schemas/schema-interpreter.ts, or ajv's compacted standalone code). Its own module so a domain can hold and call a validator
 * without importing the HTTP layer (lib/schemas/field-errors.ts turns its errors into field errors; lib/http answers 400).
 */
export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}
