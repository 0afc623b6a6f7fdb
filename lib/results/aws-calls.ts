import { DependencyUnavailableError, isRetryableDependencyError } from '../http/problem';

/**
 * Runs one AWS call; "try again later" failures (throttling, timeouts, 5xx, network) become
 * DependencyUnavailableError (the pipeline answers 503 with Retry-After). Every other error is
 * rethrown unchanged. Never adds a value from the request to a message.
 */
export async function awsCall<T>(dependency: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DependencyUnavailableError) throw error;
    if (isRetryableDependencyError(error)) throw new DependencyUnavailableError(dependency, { cause: error });
    throw error;
  }
}

export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}
