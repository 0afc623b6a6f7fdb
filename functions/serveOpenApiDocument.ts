/**
 * GET /openapi.json — no key (the contract holds no data). Counted against the anonymous rate limit
 * of the caller's address.
 *
 * The OpenAPI 3.1 document of this API, exactly the committed docs/openapi.json (shipped beside the
 * bundle). 200 application/json | 400 | 429 | 500 | 503.
 */
import { BundledFiles, serveOpenApiDocumentRoute } from '../lib/config/service';
import { storelessHttpEndpoint } from '../lib/http/endpoint';
import { readBundledFile } from '../lib/openapi/published-files';

export const handler = storelessHttpEndpoint(serveOpenApiDocumentRoute, async () => ({
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: readBundledFile(BundledFiles.openApiDocument),
  headers: { 'x-content-type-options': 'nosniff' },
}));
