import type { ErrorObject } from 'ajv';

/**
 * An ajv validate function, compiled at build time (scripts/compile-schemas.ts writes one per
 * schema under lib/<domain>/generated/). Its own module so a domain can hold and call a validator
 * without importing the HTTP layer (lib/schemas/field-errors.ts turns its errors into field errors; lib/http answers 400).
 */
export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}
