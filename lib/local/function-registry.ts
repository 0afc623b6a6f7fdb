/**
 * The Lambda handlers the local stack runs, loaded on first use exactly as Lambda loads a bundle.
 * Keyed by the function names of the endpoint list (lib/config/service.ts).
 */
import type { Handler } from 'aws-lambda';

type Loader = () => Promise<{ handler: Handler }>;

export const FunctionLoaders: Record<string, Loader> = {
  authorizer: () => import('../../functions/authorizer'),
  exportHl7Note: () => import('../../functions/exportHl7Note'),
};

const loaded = new Map<string, Handler>();

export async function loadHandler(name: string): Promise<Handler> {
  const cached = loaded.get(name);
  if (cached) return cached;
  const loader = FunctionLoaders[name];
  if (!loader) throw new Error(`no local handler registered for ${name}`);
  const mod = await loader();
  loaded.set(name, mod.handler);
  return mod.handler;
}
