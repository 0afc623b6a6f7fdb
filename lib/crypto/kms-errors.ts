/**
 * Classifies a failed KMS SDK call into the typed errors of errors.ts.
 *
 * The SDK has already retried (standard retry mode, 3 attempts by default) by the time an error
 * reaches us, so a transient error here means "the key service is not answering now": 503.
 */

import { EnvelopeDecryptError, KeyServiceError, KeyServiceUnavailableError } from './errors';

/** AWS error names that mean "try again later". */
const TRANSIENT_ERROR_NAMES: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ProvisionedThroughputExceededException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'InternalFailure',
  'InternalError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'AbortError',
]);

/** Node network error codes that mean the endpoint could not be reached or dropped us. */
const TRANSIENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Decrypt errors that mean "this ciphertext is not valid for this key / context". */
const CIPHERTEXT_REJECTED_NAMES: ReadonlySet<string> = new Set(['InvalidCiphertextException', 'IncorrectKeyException']);

const SAFE_CODE = /^[A-Za-z0-9_.:-]{1,64}$/;
const NETWORK_CODE_IN_MESSAGE = new RegExp(`\\b(${[...TRANSIENT_NETWORK_CODES].join('|')})\\b`);

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $retryable?: unknown;
}

/**
 * The node network error code of `err`, from `code` or else from the message: the SDK's retry
 * middleware re-wraps errors that fail `instanceof Error` (errors from another realm, e.g. under
 * jest) as `new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED ...')`.
 */
function networkCode(e: ErrorLike): string | undefined {
  if (typeof e.code === 'string' && TRANSIENT_NETWORK_CODES.has(e.code)) return e.code;
  if (typeof e.message === 'string') return NETWORK_CODE_IN_MESSAGE.exec(e.message)?.[1];
  return undefined;
}

/** A short, log safe identifier of an error: its AWS name or node code, else 'Unknown'. */
export function errorCode(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as ErrorLike;
    if (typeof e.code === 'string' && TRANSIENT_NETWORK_CODES.has(e.code)) return e.code;
    if (typeof e.name === 'string' && e.name !== 'Error' && SAFE_CODE.test(e.name)) return e.name;
    const network = networkCode(e);
    if (network) return network;
    if (typeof e.code === 'string' && SAFE_CODE.test(e.code)) return e.code;
  }
  return 'Unknown';
}

export function isTransientKmsError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as ErrorLike;
  if (typeof e.name === 'string' && TRANSIENT_ERROR_NAMES.has(e.name)) return true;
  if (networkCode(e)) return true;
  if (e.$retryable) return true;
  const status = e.$metadata?.httpStatusCode;
  if (typeof status === 'number' && (status >= 500 || status === 429)) return true;
  return false;
}

/**
 * Maps an error thrown by a KMS call. `operation` is the KMS operation name.
 * Decrypt's "not your ciphertext" answers become EnvelopeDecryptError('data-key-rejected').
 */
export function mapKmsError(operation: string, err: unknown): Error {
  const code = errorCode(err);
  if (isTransientKmsError(err)) return new KeyServiceUnavailableError(operation, code, { cause: err });
  if (operation === 'Decrypt' && CIPHERTEXT_REJECTED_NAMES.has(code)) {
    return new EnvelopeDecryptError('data-key-rejected', `KMS rejected the encrypted data key (${code})`, { cause: err });
  }
  return new KeyServiceError(operation, code, { cause: err });
}
