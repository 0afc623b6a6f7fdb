import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const ENDPOINTS_FILE = path.resolve(__dirname, '..', '..', '.local', 'endpoints.json');

/**
 * For the CLIs: take the running local stack's environment from .local/endpoints.json, unless the
 * caller's environment already points somewhere (e.g. a deployed stage). Returns where it came from.
 */
export function useLocalStackEnvironment(): 'environment' | 'local-stack' {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.CHART_TABLE) return 'environment';
  if (!existsSync(ENDPOINTS_FILE)) {
    throw new Error(
      `no running local stack found (${path.relative(process.cwd(), ENDPOINTS_FILE)} is missing): run \`npm start\` first, or set the stage's environment`,
    );
  }
  const file = JSON.parse(readFileSync(ENDPOINTS_FILE, 'utf8')) as { env: Record<string, string> };
  for (const [name, value] of Object.entries(file.env)) if (process.env[name] === undefined) process.env[name] = value;
  return 'local-stack';
}
