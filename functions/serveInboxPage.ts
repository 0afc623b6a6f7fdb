/**
 * GET /inbox — no key (the page holds no data; every API call it makes carries the staff member's
 * ID token). Counted against the anonymous rate limit of the caller's address.
 *
 * The staff inbox page: one HTML document with a strict Content-Security-Policy. It signs staff in
 * (authorization code + PKCE against the staff user pool) and works the review queue through the
 * /interopInbox routes. 200 text/html | 429 | 503 (Retry-After) when staff sign-in is not configured.
 */
import { serveInboxPageRoute } from '../lib/config/service';
import { storelessHttpEndpoint } from '../lib/http/endpoint';
import { HttpProblem } from '../lib/http/problem';
import { InboxPageNotConfiguredError, inboxPageConfigFromEnv, inboxPageSecurityHeaders, renderInboxPage } from '../lib/inbox-page/page';

export const handler = storelessHttpEndpoint(serveInboxPageRoute, async () => {
  let config;
  try {
    config = inboxPageConfigFromEnv();
  } catch (error) {
    if (error instanceof InboxPageNotConfiguredError) throw new HttpProblem('unavailable', error.message, { headers: { 'retry-after': '30' } });
    throw error;
  }
  return { status: 200, contentType: 'text/html; charset=utf-8', body: renderInboxPage(config), headers: inboxPageSecurityHeaders(config) };
});
