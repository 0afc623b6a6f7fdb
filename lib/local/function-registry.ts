/**
 * The Lambda handlers the local stack runs, loaded on first use exactly as Lambda loads a bundle:
 * `functions/<name>.ts` exporting `handler`, for every name in the endpoint list
 * (lib/config/service.ts). Nothing to register by hand.
 */
import type { Handler } from 'aws-lambda';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints } from '../config/service';

const known = new Set([AuthorizerFunction.name, ...HttpEndpoints.map((e) => e.name), ...BackgroundFunctions.map((f) => f.name)]);
const loaded = new Map<string, Handler>();

export async function loadHandler(name: string): Promise<Handler> {
  const cached = loaded.get(name);
  if (cached) return cached;
  if (!known.has(name)) throw new Error(`${name} is not a function of this service`);
  const mod = (await import(`../../functions/${name}`)) as { handler: Handler };
  loaded.set(name, mod.handler);
  return mod.handler;
}
