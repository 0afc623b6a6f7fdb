/**
 * GET /openapi.json, GET /docs and the Redoc bundle the page loads, answered by the local API
 * server before routing (they are not partner operations: no key, no rate limit). Read from disk
 * on each request, so `npm run openapi` shows up without a restart.
 */
import { readFileSync } from 'node:fs';
import { openApiText, redocBundleFile, referencePage, REDOC_SCRIPT_PATH } from '../openapi/reference-page';

export interface StaticAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export function apiReferenceAnswer(method: string, pathname: string): StaticAnswer | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const common = { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
  switch (pathname) {
    case '/openapi.json':
      return { status: 200, headers: { ...common, 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(openApiText(), 'utf8') };
    case '/docs':
    case '/docs/':
      return { status: 200, headers: { ...common, 'content-type': 'text/html; charset=utf-8' }, body: Buffer.from(referencePage(), 'utf8') };
    case `/${REDOC_SCRIPT_PATH}`:
      return { status: 200, headers: { ...common, 'content-type': 'text/javascript; charset=utf-8' }, body: readFileSync(redocBundleFile()) };
    default:
      return undefined;
  }
}
