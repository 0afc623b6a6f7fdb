/**
 * The browsable API reference: one self-contained HTML page rendering docs/openapi.json with
 * Redoc's standalone bundle (the `redoc` npm package), both inline: no CDN, no second request, the
 * page works offline and can be saved as one file. Served by the serveApiReference function
 * (GET /docs) locally and on every deployed stage.
 *
 * Content-Security-Policy: the two inline scripts by hash, styles inline (Redoc renders with
 * styled-components), nothing may be fetched or framed; the page holds no credentials.
 */
import { createHash } from 'node:crypto';

export interface ReferencePage {
  html: string;
  contentSecurityPolicy: string;
}

const cspHash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export class UnsafeInlineScriptError extends Error {
  override readonly name = 'UnsafeInlineScriptError';
}

export function referencePage(specText: string, redocScript: string): ReferencePage {
  const spec = JSON.parse(specText) as { info: { title: string } };
  // a literal closing tag would end the inline script early; the Redoc bundle has none (checked)
  if (/<\/script/i.test(redocScript)) throw new UnsafeInlineScriptError('the Redoc bundle contains a closing script tag');
  // `<` escaped so no string in the document can close the script element
  const inline = JSON.stringify(spec).replace(/</g, '\\u003c');
  const init = `Redoc.init(${inline}, { expandResponses: '200,201,202', jsonSampleExpandLevel: 3, hideDownloadButton: false, disableSearch: false, nativeScrollbars: true }, document.getElementById('redoc-container'));`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${spec.info.title.replace(/[<>&"]/g, '')} - API reference</title>
<style>body { margin: 0; padding: 0; font-family: system-ui, sans-serif; }</style>
</head>
<body>
<div id="redoc-container"></div>
<script>${redocScript}</script>
<script>${init}</script>
</body>
</html>
`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src ${cspHash(redocScript)} ${cspHash(init)}`,
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    'worker-src blob:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, contentSecurityPolicy };
}

let last: { specText: string; redocScript: string; page: ReferencePage } | undefined;

/** `referencePage`, built again only when a file changed (a warm function builds it once). */
export function cachedReferencePage(specText: string, redocScript: string): ReferencePage {
  if (last?.specText !== specText || last.redocScript !== redocScript) last = { specText, redocScript, page: referencePage(specText, redocScript) };
  return last.page;
}
