import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GENERATED_PAGE_FILE, buildInboxPageModule } from '../../scripts/build-inbox-page';
import { inboxPageSecurityHeaders, renderInboxPage } from './page';

const config = {
  clientId: 'c',
  authorizeUrl: 'https://signin.example/oauth2/authorize',
  tokenUrl: 'https://signin.example/oauth2/token',
  scope: 'openid profile',
};
const hashOf = (text: string) => `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;

describe('the inbox page document', () => {
  it('is built from web/inbox: the committed module equals a fresh build (run `npm run inbox-page`)', async () => {
    expect(readFileSync(GENERATED_PAGE_FILE, 'utf8')).toBe(await buildInboxPageModule());
  });

  it('allows exactly its own inline script and style by hash, and nothing else', () => {
    const html = renderInboxPage(config);
    const csp = inboxPageSecurityHeaders(config)['content-security-policy'];
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    expect(csp).toContain(`script-src '${hashOf(scripts[0]!)}'`);
    expect(csp).toContain(`style-src '${hashOf(styles[0]!)}'`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self' https://signin.example");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('cannot be broken out of by its configuration', () => {
    const html = renderInboxPage({ ...config, clientId: '</script><script>alert(1)</script>\u2028' });
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).toContain('\\u003c/script>');
  });
});
