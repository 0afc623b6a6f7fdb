import type { APIGatewayProxyEvent } from 'aws-lambda';
import { headerValue } from './headers';
import { BODY_TOO_LARGE_DETAIL, MAX_REQUEST_BODY_BYTES } from './body-limit';
import { HttpProblem } from './problem';

/** The app's request body limit (lib/http/body-limit.ts): below Lambda's 6 MB payload limit, base64 included. */
export const MAX_JSON_BODY_BYTES = MAX_REQUEST_BODY_BYTES;
/** JSON nested deeper than this is refused before it reaches validation. */
export const MAX_JSON_DEPTH = 32;

function depthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * The request body as parsed JSON: `Content-Type: application/json` (415 otherwise), at most
 * {@link MAX_REQUEST_BODY_BYTES} (413), valid UTF-8 and valid JSON no deeper than 32 levels (400). Returns the raw text too (for
 * idempotency fingerprints).
 */
export function readJsonBody(event: APIGatewayProxyEvent): { value: unknown; raw: string; bytes: number } {
  const contentType = (headerValue(event, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(contentType)) {
    throw new HttpProblem('unsupportedMediaType', 'the request body must be sent as Content-Type: application/json');
  }
  if (event.body === null || event.body === undefined || event.body === '') throw new HttpProblem('badRequest', 'the request body is empty');
  const buffer = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (buffer.length > MAX_JSON_BODY_BYTES) throw new HttpProblem('payloadTooLarge', BODY_TOO_LARGE_DETAIL);
  let raw: string;
  try {
    raw = new TextDecoder('utf-8', { fatal: true }).decode(buffer);
  } catch {
    throw new HttpProblem('badRequest', 'the request body is not valid UTF-8');
  }
  if (depthExceeds(raw, MAX_JSON_DEPTH)) throw new HttpProblem('badRequest', `the request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return { value: JSON.parse(raw) as unknown, raw, bytes: buffer.length };
  } catch {
    throw new HttpProblem('badRequest', 'the request body is not valid JSON');
  }
}
