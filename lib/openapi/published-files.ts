/**
 * Reads a function's bundled files (lib/config/service.ts `BundledFiles`): in Lambda from the
 * function's package (`$LAMBDA_TASK_ROOT/<name>`, copied there by infra/service-function.ts at
 * synth), elsewhere (local stack, tests, benchmarks) from the repository. A deployed function reads
 * each file once per container; the local stack reads it on every request, so `npm run openapi`
 * shows up without a restart.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BundledFile } from '../config/service';

const cache = new Map<string, string>();

function repositoryRoot(): string {
  // `__dirname` exists where this file runs as CommonJS (ts, jest); an ESM bundle outside Lambda
  // (benchmarks) runs from the repository root
  return typeof __dirname === 'string' ? path.resolve(__dirname, '..', '..') : process.cwd();
}

export function bundledFilePath(file: BundledFile, env: NodeJS.ProcessEnv = process.env): string {
  const taskRoot = env.LAMBDA_TASK_ROOT;
  return taskRoot ? path.join(taskRoot, file.name) : path.join(repositoryRoot(), file.source);
}

export function readBundledFile(file: BundledFile): string {
  const inLambda = Boolean(process.env.LAMBDA_TASK_ROOT);
  const cached = inLambda ? cache.get(file.name) : undefined;
  if (cached !== undefined) return cached;
  const text = readFileSync(bundledFilePath(file), 'utf8');
  if (inLambda) cache.set(file.name, text);
  return text;
}
