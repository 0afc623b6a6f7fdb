/**
 * The one request body limit of every POST endpoint (JSON and HL7 alike), enforced by the app so a
 * body over it is answered with the app's 413 problem+json before anything is read or stored.
 *
 * Why 4 MiB: Lambda refuses a synchronous invocation whose event exceeds 6 MB (6,291,456 bytes), and
 * API Gateway (REST, proxy integration) carries the body inside that event, base64-encoded when it is
 * binary (`isBase64Encoded`: 4/3 of the bytes) and JSON-escaped otherwise. 4,194,304 bytes become at
 * most 5,592,408 bytes of base64, which leaves ~680 KB for the headers, query and request context of
 * the event: a body at the limit reaches the endpoint, a body just over it gets the app's 413. Bodies
 * far larger (over ~4.7 MB as base64, over 10 MB at the gateway) are refused by the platform itself.
 */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;

/** Lambda's synchronous invocation payload limit (request and response), in bytes. */
export const LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** The detail of the 413 answered to a body over {@link MAX_REQUEST_BODY_BYTES}. */
export const BODY_TOO_LARGE_DETAIL = `the request body exceeds ${MAX_REQUEST_BODY_BYTES} bytes (4 MiB), the limit of every endpoint; nothing was stored`;
