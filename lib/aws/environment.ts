import type { EnvName } from '../config/service';

/** Thrown at cold start when the deployment forgot a variable: fail loudly, never guess. */
export class MissingConfigurationError extends Error {
  override readonly name = 'MissingConfigurationError';
  constructor(readonly variable: string) {
    super(`environment variable ${variable} is not set`);
  }
}

export function requireEnv(name: EnvName): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new MissingConfigurationError(name);
  return value;
}

export function optionalEnv(name: EnvName, fallback: string): string {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function integerEnv(name: EnvName, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new MissingConfigurationError(`${name} (positive integer)`);
  return value;
}
