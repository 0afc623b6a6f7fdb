import type { APIGatewayProxyEvent } from 'aws-lambda';
import { readJsonBody, MAX_JSON_BODY_BYTES } from './json-body';
import { HttpProblem } from './problem';

const event = (body: string | null, contentType = 'application/json', isBase64Encoded = false) =>
  ({ headers: { 'Content-Type': contentType }, multiValueHeaders: {}, body, isBase64Encoded }) as unknown as APIGatewayProxyEvent;

function problemOf(fn: () => unknown): HttpProblem {
  try {
    fn();
  } catch (error) {
    if (error instanceof HttpProblem) return error;
    throw error;
  }
  throw new Error('expected a problem');
}

describe('readJsonBody', () => {
  it('parses JSON with a JSON content type', () => {
    expect(readJsonBody(event('{"a":1}', 'application/json; charset=utf-8')).value).toEqual({ a: 1 });
    expect(readJsonBody(event('{"a":1}', 'application/fhir+json')).value).toEqual({ a: 1 });
  });
  it('refuses other content types with 415', () => {
    expect(problemOf(() => readJsonBody(event('{}', 'text/plain'))).status).toBe(415);
  });
  it('refuses an empty body, malformed JSON, invalid UTF-8 and deep nesting with 400', () => {
    expect(problemOf(() => readJsonBody(event(null))).status).toBe(400);
    expect(problemOf(() => readJsonBody(event('{"a":'))).status).toBe(400);
    expect(problemOf(() => readJsonBody(event(Buffer.from([0x7b, 0xff, 0x7d]).toString('base64'), 'application/json', true))).status).toBe(400);
    expect(problemOf(() => readJsonBody(event('['.repeat(40) + ']'.repeat(40)))).status).toBe(400);
  });
  it('does not count brackets inside strings as nesting', () => {
    expect(readJsonBody(event(JSON.stringify({ s: '['.repeat(100) })))).toBeTruthy();
  });
  it('refuses a body over the 4 MiB limit with 413', () => {
    const big = JSON.stringify({ s: 'x'.repeat(MAX_JSON_BODY_BYTES) });
    expect(problemOf(() => readJsonBody(event(big))).status).toBe(413);
  });
});
