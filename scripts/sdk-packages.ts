/**
 * The AWS SDK's packages as the bundle budgets count them (lib/config/bundle-budgets.ts): the
 * @aws-sdk/client-* packages installed and every package they depend on, from package-lock.json.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface LockFile {
  packages: Record<string, { dependencies?: Record<string, string> }>;
}

export function sdkPackages(root: string): Set<string> {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as LockFile;
  const prefix = 'node_modules/';
  const seen = new Set<string>();
  const queue = Object.keys(lock.packages)
    .filter((key) => key.startsWith(`${prefix}@aws-sdk/client-`))
    .map((key) => key.slice(prefix.length));
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    queue.push(...Object.keys(lock.packages[`${prefix}${name}`]?.dependencies ?? {}));
  }
  return seen;
}

/** The package a bundle input belongs to (`@scope/name` or `name`), or undefined for the app's own files. */
export function packageOfInput(input: string): string | undefined {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const parts = input.slice(at + 'node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}
