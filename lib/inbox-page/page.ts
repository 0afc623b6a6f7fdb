/**
 * The staff inbox page as one HTML document: inline script and style allowed by their hashes in a
 * strict Content-Security-Policy (nothing else may run or load; API calls only to the page's own
 * origin and the sign-in token endpoint). The sign-in settings are a JSON data block, not code.
 */
import { Env } from '../config/service';
import { INBOX_PAGE_SCRIPT, INBOX_PAGE_SCRIPT_HASH, INBOX_PAGE_STYLE, INBOX_PAGE_STYLE_HASH } from './generated/page';

export interface InboxPageConfig {
  clientId: string;
  authorizeUrl: string;
  tokenUrl: string;
  logoutUrl?: string;
  scope: string;
}

export class InboxPageNotConfiguredError extends Error {
  override readonly name = 'InboxPageNotConfiguredError';
}

export function inboxPageConfigFromEnv(env: NodeJS.ProcessEnv = process.env): InboxPageConfig {
  const clientId = env[Env.staffClientId];
  const authorizeUrl = env[Env.staffAuthorizeUrl];
  const tokenUrl = env[Env.staffTokenUrl];
  if (!clientId || !authorizeUrl || !tokenUrl) throw new InboxPageNotConfiguredError('staff sign-in is not configured on this stage');
  return {
    clientId,
    authorizeUrl,
    tokenUrl,
    scope: env[Env.staffScopes] || 'openid profile',
    ...(env[Env.staffLogoutUrl] ? { logoutUrl: env[Env.staffLogoutUrl] } : {}),
  };
}

/** JSON safe inside a script element: no `<` can close it. */
function jsonForHtml(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function inboxPageSecurityHeaders(config: InboxPageConfig): Record<string, string> {
  const tokenOrigin = new URL(config.tokenUrl).origin;
  return {
    'content-security-policy': [
      "default-src 'none'",
      `script-src '${INBOX_PAGE_SCRIPT_HASH}'`,
      `style-src '${INBOX_PAGE_STYLE_HASH}'`,
      `connect-src 'self' ${tokenOrigin}`,
      "img-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'permissions-policy': 'camera=(), microphone=(), geolocation=()',
  };
}

export function renderInboxPage(config: InboxPageConfig): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Interop inbox</title>',
    `<style>${INBOX_PAGE_STYLE}</style>`,
    '</head>',
    '<body>',
    '<div id="app"><noscript>The interop inbox needs JavaScript.</noscript></div>',
    `<script type="application/json" id="inbox-config">${jsonForHtml(config)}</script>`,
    `<script>${INBOX_PAGE_SCRIPT}</script>`,
    '</body>',
    '</html>',
  ].join('\n');
}
