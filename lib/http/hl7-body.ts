import type { APIGatewayProxyEvent } from 'aws-lambda';
import { headerValue } from './headers';
import { BODY_TOO_LARGE_DETAIL, MAX_REQUEST_BODY_BYTES } from './body-limit';
import { HttpProblem } from './problem';

/** The app's request body limit (lib/http/body-limit.ts): below Lambda's 6 MB payload limit, base64 included. */
export const MAX_HL7_BODY_BYTES = MAX_REQUEST_BODY_BYTES;
export const HL7_REQUEST_CONTENT_TYPES = ['application/hl7-v2', 'x-application/hl7-v2+er7', 'text/plain'] as const;

/**
 * The request body as bytes: Content-Type one of {@link HL7_REQUEST_CONTENT_TYPES} (415 otherwise), not
 * empty (400), at most {@link MAX_REQUEST_BODY_BYTES} (413). The character set is the message's business (MSH-18), not the header's.
 */
export function readHl7Body(event: APIGatewayProxyEvent): Buffer {
  const contentType = (headerValue(event, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (!(HL7_REQUEST_CONTENT_TYPES as readonly string[]).includes(contentType)) {
    throw new HttpProblem('unsupportedMediaType', `the request body must be sent as Content-Type: ${HL7_REQUEST_CONTENT_TYPES.join(', ')}`);
  }
  if (event.body === null || event.body === undefined || event.body === '') throw new HttpProblem('badRequest', 'the request body is empty');
  const buffer = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (buffer.length > MAX_HL7_BODY_BYTES) throw new HttpProblem('payloadTooLarge', BODY_TOO_LARGE_DETAIL);
  return buffer;
}
