/**
 * The browsable API reference: one HTML page rendering docs/openapi.json with Redoc's standalone
 * bundle (from the `redoc` npm package, served beside the page: no CDN, works offline). The spec
 * is inlined, so the page needs exactly one other file. Served by the local stack (GET /docs) and
 * published with each deployed stage (infra/api-reference.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { OPENAPI_FILE } from './document';

/** Where the page loads the bundle from, relative to the page (GET /docs -> /docs/redoc.standalone.js). */
export const REDOC_SCRIPT_PATH = 'docs/redoc.standalone.js';

export function redocBundleFile(): string {
  return path.join(path.dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js');
}

export function openApiText(): string {
  return readFileSync(OPENAPI_FILE, 'utf8');
}

export function referencePage(specText: string = openApiText()): string {
  const spec = JSON.parse(specText) as { info: { title: string } };
  // `<` escaped so no string in the document can close the script element
  const inline = JSON.stringify(spec).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${spec.info.title.replace(/[<>&"]/g, '')} - API reference</title>
<style>body { margin: 0; padding: 0; font-family: system-ui, sans-serif; }</style>
</head>
<body>
<div id="redoc-container"></div>
<script src="${REDOC_SCRIPT_PATH}"></script>
<script>
  Redoc.init(${inline}, { expandResponses: '200,201,202', jsonSampleExpandLevel: 3, hideDownloadButton: false, disableSearch: false, nativeScrollbars: true }, document.getElementById('redoc-container'));
</script>
</body>
</html>
`;
}
