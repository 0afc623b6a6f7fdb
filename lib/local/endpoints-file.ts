import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const ENDPOINTS_FILE = path.resolve(__dirname, '..', '..', '.local', 'endpoints.json');

/** The endpoints file the CLIs read: INTEROP_ENDPOINTS_FILE (tests point it elsewhere), else ENDPOINTS_FILE. */
export function endpointsFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return env.INTEROP_ENDPOINTS_FILE || ENDPOINTS_FILE;
}

/** No .local/endpoints.json: the CLIs print lib/admin/target.ts LOCAL_STACK_NOT_RUNNING for it. */
export class LocalStackNotRunningError extends Error {
  override readonly name = 'LocalStackNotRunningError';
}

/**
 * For the CLIs: take the running local stack's environment from .local/endpoints.json, unless the
 * caller's environment already points somewhere (e.g. a deployed stage). Returns where it came from.
 */
export function useLocalStackEnvironment(): 'environment' | 'local-stack' {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.CHART_TABLE) return 'environment';
  const endpointsFile = endpointsFilePath();
  if (!existsSync(endpointsFile)) {
    throw new LocalStackNotRunningError(
      `no running local stack found (${path.relative(process.cwd(), endpointsFile)} is missing): run \`npm start\` first, or set the stage's environment`,
    );
  }
  const file = JSON.parse(readFileSync(endpointsFile, 'utf8')) as { env: Record<string, string> };
  for (const [name, value] of Object.entries(file.env)) if (process.env[name] === undefined) process.env[name] = value;
  return 'local-stack';
}
