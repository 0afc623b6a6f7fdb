/**
 * The staff inbox page end to end (issue 20), in headless Chromium (Debian's `chromium`, driven by
 * playwright-core) against the local stack with its OpenID provider: a signed-out browser sees the
 * sign-in page; demo-reviewer signs in, finds a packet this test posted, compares it with its two
 * candidates, routes it with the keyboard through the confirmation, and sees it leave the queue;
 * the API then shows routed_manually and the audit trail names demo-reviewer; demo-viewer reads but
 * has no route button. axe-core reports no violation; no CSP violation; no PHI in the URL or storage.
 * Screenshots of the queue and of a packet view are written to docs/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AuditTrail } from '../../lib/audit/audit-trail';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(`inbox page browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
}
const describeWithBrowser = haveChromium ? describe : describe.skip;
// screenshots land in docs/ when asked (INBOX_SCREENSHOTS=docs npx jest test/e2e), else in the temp dir
const docs = process.env.INBOX_SCREENSHOTS === 'docs' ? path.resolve(__dirname, '..', '..', 'docs') : tmpdir();
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

let stack: LocalStack;
let browser: Browser;

beforeAll(async () => {
  if (!haveChromium) return;
  stack = await startTestStack({ staffSignIn: true, backgroundWorkers: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

/** A packet for Robin Example, 1975-06-30: two chart patients share that name and birth date. */
async function postAmbiguousPacket(tag: string): Promise<string> {
  const res = await call(stack, 'POST', '/receiveFormIntakeScope', {
    headers: { 'x-api-key': 'demo-forms-key', 'content-type': 'application/json' },
    body: JSON.stringify({
      payload: {
        sourceSystemId: 'demo-form-tool',
        formId: `e2e-${tag}`,
        formName: `Intake ${tag}`,
        submissionId: `e2e-${tag}-${Date.now()}`,
        patient: { externalPatientId: `ft-e2e-${tag}`, firstName: 'Robin', lastName: 'Example', dob: '1975-06-30', email: `robin.${tag}@example.org` },
        answers: { 'Reason for visit': 'Follow-up', Allergies: 'none known' },
      },
    }),
  });
  expect([201, 202]).toContain(res.status);
  const packetId = res.json<{ packetId: string }>().packetId;
  // the matcher (polled in process) holds it for review as ambiguous
  for (let i = 0; i < 100; i++) {
    const detail = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: { 'x-api-key': 'demo-inbox-key' } });
    if (detail.json<{ state: string }>().state === 'pending_review') return packetId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the packet was not held for review');
}

async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto(`${stack.urls.api}/inbox`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText(`(${username},`).waitFor();
}

async function expectNoAxeViolations(page: Page): Promise<void> {
  // evaluated through the DevTools protocol: the page's CSP rightly refuses injected script tags
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; nodes: unknown[] }> }> } }
    ).axe;
    return axe.run(document, { resultTypes: ['violations'] });
  });
  expect(result.violations.map((v) => `${v.id} (${v.nodes.length})`)).toEqual([]);
}

describeWithBrowser('the inbox page in a browser', () => {
  it('a signed-out browser gets the sign-in page and the API 401', async () => {
    const page = await browser.newPage();
    await page.goto(`${stack.urls.api}/inbox`);
    await expect(page.getByRole('button', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    await expectNoAxeViolations(page);
    expect((await call(stack, 'GET', '/interopInbox')).status).toBe(401);
    await page.close();
  });

  it('a reviewer compares a packet with its two candidates and routes it; the audit trail names them', async () => {
    const packetId = await postAmbiguousPacket('reviewer');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const cspViolations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    await signIn(page, 'demo-reviewer', 'demo-reviewer-password');
    const row = page.getByRole('row').filter({ hasText: 'e2e-reviewer' });
    await row.waitFor();
    await expect(row.getByRole('cell').nth(3).textContent()).resolves.toBe('Several patients fit equally');
    await expectNoAxeViolations(page);
    await page.screenshot({ path: path.join(docs, 'inbox-queue.png'), fullPage: true });

    await row.getByRole('button', { name: /Open packet/ }).click();
    await page.getByRole('heading', { name: 'Intake reviewer from demo-form-tool' }).waitFor();
    const cards = page.getByRole('article');
    await expect(cards.count()).resolves.toBe(3); // submitted + two candidates
    await expect(page.getByText('robin.reviewer@example.org').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: /^Route to Robin Example \(MRN / }).count()).resolves.toBe(2);
    await expectNoAxeViolations(page);
    await page.screenshot({ path: path.join(docs, 'inbox-packet.png'), fullPage: true });

    // nothing about the patient in the address bar or in browser storage
    expect(page.url()).toBe(`${stack.urls.api}/inbox`);
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
    expect(storage).not.toMatch(/Robin|Example|1975|eyJ/);

    // route the first candidate with the keyboard: the confirmation names both people
    await page
      .getByRole('button', { name: /^Route to Robin Example \(MRN / })
      .first()
      .focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Route this packet?' });
    await dialog.waitFor();
    await expect(dialog.textContent()).resolves.toMatch(/Robin Example.*born 1975-06-30.*chart of Robin Example.*MRN/);
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'The packet was routed to Robin Example' }).waitFor();
    await page.getByRole('row').filter({ hasText: 'e2e-reviewer' }).waitFor({ state: 'detached' });

    const after = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: { 'x-api-key': 'demo-inbox-key' } });
    const routed = after.json<{ state: string; patientId: string; history: Array<{ actor: string; staffUsername?: string }> }>();
    expect(routed.state).toBe('routed_manually');
    expect(routed.history.at(-1)).toMatchObject({ actor: 'staff', staffUsername: 'demo-reviewer' });
    const db = new DynamoDBClient({ endpoint: stack.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const records = await new AuditTrail(db, stack.tables.audit).forPatient(routed.patientId);
    db.destroy();
    expect(records.filter((r) => r.action === 'inbox.route' && r.staffUsername === 'demo-reviewer')).toHaveLength(1);
    expect(records.filter((r) => r.action === 'inbox.candidates' && r.staffUsername === 'demo-reviewer').length).toBeGreaterThanOrEqual(1);
    expect(cspViolations).toEqual([]);

    // signing out ends the session at the provider too
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await context.close();
  });

  it('a reviewer finds the patient by MRN when no candidate is, and routes there', async () => {
    const packetId = await postAmbiguousPacket('search');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page, 'demo-reviewer', 'demo-reviewer-password');
    const row = page.getByRole('row').filter({ hasText: 'e2e-search' });
    await row.getByRole('button', { name: /Open packet/ }).click();
    await page.getByRole('heading', { name: 'Intake search from demo-form-tool' }).waitFor();
    const find = page.getByRole('region', { name: 'Find another patient' });
    await find.getByRole('textbox', { name: 'MRN' }).fill('demo-000001');
    await find.getByRole('textbox', { name: 'MRN' }).press('Enter');
    await find.getByRole('status').filter({ hasText: '1 chart patient found.' }).waitFor();
    await expectNoAxeViolations(page);
    await page.screenshot({ path: path.join(docs, 'inbox-search.png'), fullPage: true });
    // nothing searched for is in the address bar
    expect(page.url()).toBe(`${stack.urls.api}/inbox`);
    await find.getByRole('button', { name: 'Route to Alex Quinn Sample (MRN DEMO-000001)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Route this packet?' });
    await expect(dialog.textContent()).resolves.toMatch(/Robin Example.*born 1975-06-30.*chart of Alex Quinn Sample.*MRN DEMO-000001/);
    await dialog.getByRole('button', { name: 'Route to Alex Quinn Sample' }).click();
    await page.getByRole('status').filter({ hasText: 'The packet was routed to Alex Quinn Sample' }).waitFor();
    const after = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: { 'x-api-key': 'demo-inbox-key' } });
    expect(after.json<{ state: string; patientId: string }>()).toMatchObject({ state: 'routed_manually', patientId: 'demo-patient-1' });
    await context.close();
  });

  it('a reviewer routes a document held from a partner to a chart patient; it then shows as routed', async () => {
    const controlId = `E2E${Date.now().toString(36).toUpperCase()}`;
    const mdm =
      [
        `MSH|^~\\&|EHR|DEMO-LAB-LIS|||20240301||MDM^T02|${controlId}|P|2.5.1`,
        `PID|1||L-${controlId}^^^DEMO-LAB^MR||Heldperson^Harriet||19610203|F`,
        `TXA|1|PN|TEXT|20240301|||||1^Doc^Ada|||n-${controlId}`,
        'OBX|1|TX|NOTE||Seen for a held follow-up.',
      ].join('\r') + '\r';
    const sent = await call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': 'demo-hl7-key', 'content-type': 'application/hl7-v2' }, body: mdm });
    expect(sent.text).toContain('MSA|AA');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page, 'demo-reviewer', 'demo-reviewer-password');
    await page.getByRole('navigation', { name: 'Inbox views' }).getByRole('button', { name: 'Held from partners' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Harriet Heldperson' });
    await row.waitFor();
    await expect(row.textContent()).resolves.not.toContain('Seen for a held follow-up.');
    await expectNoAxeViolations(page);
    await page.screenshot({ path: path.join(docs, 'inbox-held.png'), fullPage: true });

    await row.getByRole('button', { name: /^Open Document for Harriet Heldperson/ }).click();
    await page.getByRole('heading', { name: 'Document from DEMO-LAB-LIS' }).waitFor();
    await expect(page.getByText('Seen for a held follow-up.').isVisible()).resolves.toBe(true);
    const find = page.getByRole('region', { name: 'Find the chart patient' });
    await find.getByRole('textbox', { name: 'MRN' }).fill('demo-000001');
    await find.getByRole('textbox', { name: 'MRN' }).press('Enter');
    await find.getByRole('status').filter({ hasText: '1 chart patient found.' }).waitFor();
    await expectNoAxeViolations(page);
    await find.getByRole('button', { name: 'Route to Alex Quinn Sample (MRN DEMO-000001)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Route this record?' });
    await expect(dialog.textContent()).resolves.toMatch(/Harriet Heldperson.*born 1961-02-03.*filed under Alex Quinn Sample.*MRN DEMO-000001/);
    await dialog.getByRole('button', { name: 'Route to Alex Quinn Sample' }).click();
    await page.getByRole('status').filter({ hasText: 'Routed to Alex Quinn Sample (MRN DEMO-000001).' }).waitFor();
    await page.getByText('Routed to chart demo-patient-1 by demo-reviewer').waitFor();
    await expect(page.getByRole('region', { name: 'Find the chart patient' }).count()).resolves.toBe(0);
    await expectNoAxeViolations(page);
    expect(page.url()).toBe(`${stack.urls.api}/inbox`);

    const note = await call(stack, 'GET', `/exportHl7Note?patientId=demo-patient-1&noteId=${encodeURIComponent(`demo-lab:n-${controlId}`)}`, {
      headers: { 'x-api-key': 'demo-export-key' },
    });
    expect(note.status).toBe(200);
    const db = new DynamoDBClient({ endpoint: stack.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const records = await new AuditTrail(db, stack.tables.audit).forPatient('demo-patient-1');
    db.destroy();
    expect(records.filter((r) => r.action === 'inbox.held_route' && r.staffUsername === 'demo-reviewer')).toHaveLength(1);
    await context.close();
  });

  it('a viewer reads the packet but has no route button; at 200 % zoom nothing scrolls sideways', async () => {
    await postAmbiguousPacket('viewer');
    // 200 % zoom of a 1280 px window: the page lays out in 640 CSS pixels
    const context = await browser.newContext({ viewport: { width: 640, height: 800 }, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await signIn(page, 'demo-viewer', 'demo-viewer-password');
    const row = page.getByRole('row').filter({ hasText: 'e2e-viewer' });
    await row.getByRole('button', { name: /Open packet/ }).click();
    await page.getByRole('heading', { name: 'Intake viewer from demo-form-tool' }).waitFor();
    await expect(page.getByRole('article').count()).resolves.toBe(3);
    await expect(page.getByRole('button', { name: /Route to/ }).count()).resolves.toBe(0);
    await expect(page.getByRole('region', { name: 'Find another patient' }).count()).resolves.toBe(0);
    await expect(page.getByText('read only').isVisible()).resolves.toBe(true);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    // on failure, the page as it was is in the temp dir
    if (overflow > 0) await page.screenshot({ path: path.join(tmpdir(), 'inbox-overflow.png'), fullPage: true });
    expect(overflow).toBeLessThanOrEqual(0);
    await expectNoAxeViolations(page);
    await context.close();
  });
});
