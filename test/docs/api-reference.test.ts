/**
 * GET /docs in a real browser: Debian's chromium (/usr/bin/chromium, or CHROMIUM_PATH) driven by
 * playwright-core, against the local stack, with every request to anything but the local stack
 * refused (the page must work offline: no CDN). Checks that every operation's title of
 * docs/openapi.json is on the rendered page and saves docs/api-reference.png (shown in README.md).
 * Skipped, with a message, only when no chromium is installed (.ci/run installs it).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import type { LocalStack } from '../../lib/local/stack';
import { startTestStack } from '../support/local-stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const installed = existsSync(CHROMIUM);
const ROOT = path.resolve(__dirname, '..', '..');
const SCREENSHOT = path.join(ROOT, 'docs', 'api-reference.png');
const REDOC_CREDIT_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

if (!installed) {
  console.warn(`SKIPPED: the /docs browser test needs Chromium at ${CHROMIUM} (Debian: apt-get install -y chromium; or set CHROMIUM_PATH)`);
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function operationTitles(): string[] {
  const document = JSON.parse(readFileSync(path.join(ROOT, 'docs', 'openapi.json'), 'utf8')) as Json;
  return Object.values(document.paths as Json).flatMap((item) => Object.values(item as Json).map((op) => (op as Json).summary as string));
}

(installed ? describe : describe.skip)('GET /docs in headless Chromium', () => {
  let stack: LocalStack;
  let context: BrowserContext;
  let profile: string;

  beforeAll(async () => {
    stack = await startTestStack();
    profile = mkdtempSync(path.join(os.tmpdir(), 'interop-docs-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1440, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await stack?.close();
  });

  it('renders every operation from the local stack alone and saves docs/api-reference.png', async () => {
    const page = await context.newPage();
    const local = new URL(stack.urls.api).host;
    const refused: string[] = [];
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.host === local || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
      refused.push(url.href);
      return route.abort();
    });
    const cspViolations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text().slice(0, 200));
    });
    const response = await page.goto(`${stack.urls.api}/docs`, { waitUntil: 'load', timeout: 90_000 });
    expect(response?.status()).toBe(200);
    const titles = operationTitles();
    expect(titles.length).toBeGreaterThan(0);
    await page.waitForFunction((expected: string[]) => expected.every((t) => document.body.innerText.includes(t)), titles, { timeout: 90_000 });
    const text = await page.evaluate(() => document.body.innerText);
    const missing = titles.filter((t) => !text.includes(t));
    expect(missing).toEqual([]);
    // the examples are on the page too: an HL7 message and the x-api-key scheme
    expect(text).toContain('MSH|^~\\&|');
    expect(text).toContain('x-api-key');
    // Redoc's sidebar credit loads its logo from cdn.redoc.ly; it is refused here like any other
    // outside request and the page renders without it. Nothing else may leave the machine.
    expect(refused.filter((url) => url !== REDOC_CREDIT_LOGO)).toEqual([]);
    // the page's CSP blocks nothing it needs (the Redoc credit logo is the one outside image)
    console.log(`GET /docs: CSP console messages: ${cspViolations.length}${cspViolations.length ? `: ${cspViolations.join(' | ')}` : ''}`);
    expect(cspViolations.filter((m) => !m.includes(REDOC_CREDIT_LOGO))).toEqual([]);
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(existsSync(SCREENSHOT)).toBe(true);
  }, 180_000);
});
