/**
 * Classifies a failed KMS SDK call into the typed errors of errors.ts.
 *
 * The SDK has already retried (standard retry mode, 3 attempts by default) by the time an error
 * reaches us, so a transient error here means "the key service is not answering now": 503.
 */

import { isTransientAwsError, networkCode, TRANSIENT_NETWORK_CODES, type ErrorLike } from '../aws/dependency-calls';
import { EnvelopeDecryptError, KeyServiceError, KeyServiceUnavailableError } from './errors';

/** Decrypt errors that mean "this ciphertext is not valid for this key / context". */
const CIPHERTEXT_REJECTED_NAMES: ReadonlySet<string> = new Set(['InvalidCiphertextException', 'IncorrectKeyException']);

const SAFE_CODE = /^[A-Za-z0-9_.:-]{1,64}$/;

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

/**
 * Maps an error thrown by a KMS call. `operation` is the KMS operation name.
 * Decrypt's "not your ciphertext" answers become EnvelopeDecryptError('data-key-rejected').
 */
export function mapKmsError(operation: string, err: unknown): Error {
  const code = errorCode(err);
  if (isTransientAwsError(err)) return new KeyServiceUnavailableError(operation, code, { cause: err });
  if (operation === 'Decrypt' && CIPHERTEXT_REJECTED_NAMES.has(code)) {
    return new EnvelopeDecryptError('data-key-rejected', `KMS rejected the encrypted data key (${code})`, { cause: err });
  }
  return new KeyServiceError(operation, code, { cause: err });
}
