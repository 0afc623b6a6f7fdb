import { HttpProblem } from './problem';
import { fieldErrors } from '../schemas/field-errors';
import type { CompiledValidator } from '../schemas/compiled-validator';

export type { CompiledValidator };
export { fieldErrors };

/** Runs a compiled validator and throws one 400 listing every failing field. */
export function assertValid<T>(validate: CompiledValidator, value: unknown, what: string): T {
  if (!validate(value)) {
    throw new HttpProblem('validation', `${what} failed validation`, { errors: fieldErrors(validate.errors) });
  }
  return value as T;
}
