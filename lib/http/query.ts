import type { APIGatewayProxyEvent } from 'aws-lambda';
import { HttpProblem, type FieldError } from './problem';

export const MAX_ID_LENGTH = 128;
const SENT_ONCE = 'must be sent once';
/** What an identifier query parameter may be (also published in docs/openapi.json). */
export const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const idPattern = ID_PATTERN;

/**
 * Every value the request carried for `name`, in order. Repeats are kept (identical ones too), so
 * the readers below can refuse them: a parameter sent more than once is always a 400 naming it,
 * whether the values agree or not (README, "Endpoints").
 */
function values(event: APIGatewayProxyEvent, name: string): string[] {
  const multi = event.multiValueQueryStringParameters?.[name];
  if (multi && multi.length > 0) return multi;
  const single = event.queryStringParameters?.[name];
  return single === undefined || single === null ? [] : [single];
}

/**
 * Reads identifier query parameters: each required, sent once, non-empty, and shaped like an id
 * (letters, digits, `. _ : -`, at most 128). Every failing parameter is listed in one 400.
 */
export function requireIdParameters<N extends string>(event: APIGatewayProxyEvent, names: readonly N[]): Record<N, string> {
  const errors: FieldError[] = [];
  const out = {} as Record<N, string>;
  for (const name of names) {
    const list = values(event, name);
    if (list.length > 1) errors.push({ parameter: name, message: SENT_ONCE });
    else if (list.length === 0 || list[0] === '') errors.push({ parameter: name, message: 'is required' });
    else if (!idPattern.test(list[0]!)) errors.push({ parameter: name, message: 'must be 1-128 characters of letters, digits, ".", "_", ":" or "-"' });
    else out[name] = list[0]!;
  }
  if (errors.length > 0) throw new HttpProblem('validation', 'query parameters are missing or invalid', { errors });
  return out;
}

/** An optional integer parameter within [min, max]; anything else is a 400 naming the range. */
export function optionalIntegerParameter(event: APIGatewayProxyEvent, name: string, range: { min: number; max: number; fallback: number }): number {
  const list = values(event, name);
  if (list.length === 0) return range.fallback;
  if (list.length > 1) throw new HttpProblem('validation', `${name} ${SENT_ONCE}`, { errors: [{ parameter: name, message: SENT_ONCE }] });
  const message = `must be an integer from ${range.min} to ${range.max}`;
  if (!/^-?\d{1,10}$/.test(list[0]!)) throw new HttpProblem('validation', `${name} ${message}`, { errors: [{ parameter: name, message }] });
  const value = Number(list[0]);
  if (value < range.min || value > range.max) throw new HttpProblem('validation', `${name} ${message}`, { errors: [{ parameter: name, message }] });
  return value;
}

/** An optional parameter sent at most once (any repeat, identical or not, is a 400 naming it). */
export function optionalSingleParameter(event: APIGatewayProxyEvent, name: string): string | undefined {
  const list = values(event, name);
  if (list.length > 1) throw new HttpProblem('validation', `${name} ${SENT_ONCE}`, { errors: [{ parameter: name, message: SENT_ONCE }] });
  return list[0];
}
