/**
 * GET /docs — no key (the page holds no data). Counted against the anonymous rate limit of the
 * caller's address.
 *
 * The browsable API reference: docs/openapi.json rendered by Redoc in one self-contained HTML page
 * with a Content-Security-Policy (lib/openapi/reference-page.ts). 200 text/html | 400 | 429 | 500 | 503.
 */
import { BundledFiles, serveApiReferenceRoute } from '../lib/config/service';
import { storelessHttpEndpoint } from '../lib/http/endpoint';
import { readBundledFile } from '../lib/openapi/published-files';
import { cachedReferencePage } from '../lib/openapi/reference-page';

export const handler = storelessHttpEndpoint(serveApiReferenceRoute, async () => {
  const page = cachedReferencePage(readBundledFile(BundledFiles.openApiDocument), readBundledFile(BundledFiles.redocBundle));
  return {
    status: 200,
    contentType: 'text/html; charset=utf-8',
    body: page.html,
    headers: { 'content-security-policy': page.contentSecurityPolicy, 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff' },
  };
});
