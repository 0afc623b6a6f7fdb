/**
 * npm run openapi: writes docs/openapi.json from the endpoint list, schemas/ and
 * lib/openapi/endpoint-docs.ts. Deterministic: the same inputs give the same bytes.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { OPENAPI_FILE, REPO_ROOT, renderOpenApiDocument } from '../lib/openapi/document';

try {
  const text = renderOpenApiDocument();
  writeFileSync(OPENAPI_FILE, text);
  process.stdout.write(`wrote ${path.relative(REPO_ROOT, OPENAPI_FILE)} (${Buffer.byteLength(text)} bytes)\n`);
} catch (error) {
  process.stderr.write(`npm run openapi: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
