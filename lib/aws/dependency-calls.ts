/**
 * The one classifier of AWS failures and the one call wrapper every store uses.
 *
 * By the time an error reaches us the SDK has retried (standard mode, 3 attempts), so a transient
 * error here means "the service is not answering now": `awsCall` turns it into the domain's
 * DependencyUnavailableError (the pipeline answers 503 with Retry-After, workers retry the
 * message). Every other error is rethrown unchanged. No value from a request is added to a message.
 */
import { DependencyUnavailableError } from '../domain-errors';

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
  'TransactionInProgressException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'InternalFailure',
  'InternalError',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'AbortError',
  // lib/crypto's typed error for the same condition
  'KeyServiceUnavailableError',
]);

/** Node network error codes that mean the endpoint could not be reached or dropped us. */
export const TRANSIENT_NETWORK_CODES: ReadonlySet<string> = new Set([
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

const NETWORK_CODE_IN_MESSAGE = new RegExp(`\\b(${[...TRANSIENT_NETWORK_CODES].join('|')})\\b`);

/** The fields of an AWS SDK or node error this module reads. */
export interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $retryable?: unknown;
}

/**
 * The node network error code of `error`, from `code` or else from the message: the SDK's retry
 * middleware re-wraps errors that fail `instanceof Error` (errors from another realm, e.g. under
 * jest) as `new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED ...')`.
 */
export function networkCode(error: unknown): string | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const e = error as ErrorLike;
  if (typeof e.code === 'string' && TRANSIENT_NETWORK_CODES.has(e.code)) return e.code;
  if (typeof e.message === 'string') return NETWORK_CODE_IN_MESSAGE.exec(e.message)?.[1];
  return undefined;
}

/** True for failures that say "try again later" rather than "this request is wrong". */
export function isTransientAwsError(error: unknown): boolean {
  if (error instanceof DependencyUnavailableError) return true;
  if (!error || typeof error !== 'object') return false;
  const e = error as ErrorLike;
  if (typeof e.name === 'string' && TRANSIENT_ERROR_NAMES.has(e.name)) return true;
  if (typeof e.code === 'string' && TRANSIENT_ERROR_NAMES.has(e.code)) return true;
  if (networkCode(e)) return true;
  if (e.$retryable) return true;
  const status = e.$metadata?.httpStatusCode;
  return typeof status === 'number' && (status >= 500 || status === 429);
}

/** Runs one AWS call of `dependency` (a name for logs and metrics, e.g. 'chart-table'). */
export async function awsCall<T>(dependency: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DependencyUnavailableError) throw error;
    if (isTransientAwsError(error)) throw new DependencyUnavailableError(dependency, { cause: error });
    throw error;
  }
}

/** DynamoDB refused a conditional write (the condition did not hold). */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}
