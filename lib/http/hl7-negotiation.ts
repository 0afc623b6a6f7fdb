import type { APIGatewayProxyEvent } from 'aws-lambda';
import { acceptsMediaType } from './accept';
import { headerValues } from './headers';
import { HttpProblem } from './problem';

export const HL7_MEDIA_TYPE = 'application/hl7-v2';

/** 406 unless the caller's Accept admits HL7 v2 (`*\/*`, `application/*`, `application/hl7-v2` or none). */
export function requireHl7Acceptable(event: APIGatewayProxyEvent): void {
  const accept = headerValues(event, 'accept').join(', ');
  if (!acceptsMediaType(accept || undefined, HL7_MEDIA_TYPE)) {
    throw new HttpProblem('notAcceptable', `this endpoint produces ${HL7_MEDIA_TYPE} only`);
  }
}
