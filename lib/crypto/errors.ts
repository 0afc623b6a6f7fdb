/**
 * Typed errors of the envelope encryption layer (Powertools style: a stable `name`, the
 * underlying error as `cause`).
 *
 * Messages are fixed strings plus non sensitive facts (a KMS operation name, an AWS error name,
 * a reason code). They never carry plaintext, data keys, or encryption context values, because a
 * handler may log `error.message` as is. The `cause` is the KMS SDK error or the node:crypto
 * error; neither holds plaintext.
 *
 * HTTP mapping for callers:
 *   EnvelopeDecryptError        -> the stored record cannot be trusted: 500 (data integrity), or
 *                                   422/400 when the envelope came from the request itself
 *   KeyServiceUnavailableError  -> 503 with Retry-After (KMS throttled, timed out, 5xx, network)
 *   KeyServiceError             -> 500 (KMS refused for a lasting reason: access denied, key
 *                                   disabled / not found, bad request; an operator has to act)
 */

export type EnvelopeDecryptReason =
  /** the envelope is not a well formed envelope object / string */
  | 'malformed'
  /** the envelope version or algorithm is not one this code reads */
  | 'unsupported-version'
  /** the stored context differs from the context the caller expected */
  | 'context-mismatch'
  /** AES-GCM authentication failed: ciphertext, iv, tag, context or header were altered */
  | 'authentication-failed'
  /** KMS refused to decrypt the data key (altered edk / kctx, or another key) */
  | 'data-key-rejected';

export class EnvelopeDecryptError extends Error {
  override readonly name = 'EnvelopeDecryptError';
  readonly reason: EnvelopeDecryptReason;

  constructor(reason: EnvelopeDecryptReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

export class KeyServiceUnavailableError extends Error {
  override readonly name = 'KeyServiceUnavailableError';
  /** KMS operation that failed, e.g. 'GenerateDataKey' */
  readonly operation: string;
  /** AWS error name or node error code of the cause, e.g. 'ThrottlingException', 'ECONNREFUSED' */
  readonly code: string;
  /** seconds a caller may suggest in Retry-After */
  readonly retryAfterSeconds: number;

  constructor(operation: string, code: string, options?: { cause?: unknown }) {
    super(`key service unavailable during ${operation} (${code})`, options);
    this.operation = operation;
    this.code = code;
    this.retryAfterSeconds = 1;
  }
}

export class KeyServiceError extends Error {
  override readonly name = 'KeyServiceError';
  readonly operation: string;
  readonly code: string;

  constructor(operation: string, code: string, options?: { cause?: unknown }) {
    super(`key service refused ${operation} (${code})`, options);
    this.operation = operation;
    this.code = code;
  }
}
