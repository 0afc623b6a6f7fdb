/**
 * The signature check docs/webhooks.md shows ("Verifying the signature") works: it accepts what the
 * service's signer (the standardwebhooks package) signs, with the key decoded from the `whsec_`
 * secret, and refuses a changed body, another secret, an old timestamp and the printed string as key.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';

type Verify = (secret: string, headers: Record<string, string>, body: string) => boolean;

function snippet(): Verify {
  const text = readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'webhooks.md'), 'utf8');
  const block = /<!-- webhook-verify-snippet -->\s*```js\n([\s\S]*?)```/.exec(text);
  if (!block) throw new Error('docs/webhooks.md has no webhook-verify-snippet block');
  const module = { exports: {} as { verify?: Verify } };
  // the block is CommonJS as a reader would save it: run it with require and module
  new Function('require', 'module', block[1]!)(require, module);
  if (!module.exports.verify) throw new Error('the snippet exports no verify');
  return module.exports.verify;
}

describe('the webhook signature snippet of docs/webhooks.md', () => {
  const verify = snippet();
  const secret = `whsec_${Buffer.from('a local test secret of 32 bytes!').toString('base64')}`;
  const body = '{"type":"ping","timestamp":"2026-11-26T00:00:00.000Z","data":{"eventId":"lv_1"}}';
  const signed = (at: Date, key = secret) => {
    const signature = new Webhook(key).sign('dl_test', at, body);
    return { 'webhook-id': 'dl_test', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
  };

  it('accepts a delivery the service signed', () => {
    expect(verify(secret, signed(new Date()), body)).toBe(true);
  });

  it('accepts when one of several signatures (a rotation) matches', () => {
    const headers = signed(new Date());
    const other = signed(new Date(), `whsec_${Buffer.from('another secret, also 32 bytes!!!').toString('base64')}`);
    expect(verify(secret, { ...headers, 'webhook-signature': `${other['webhook-signature']} ${headers['webhook-signature']}` }, body)).toBe(true);
  });

  it('refuses a changed body, another secret, and a timestamp older than five minutes', () => {
    expect(verify(secret, signed(new Date()), body.replace('lv_1', 'lv_2'))).toBe(false);
    expect(verify(`whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`, signed(new Date()), body)).toBe(false);
    expect(verify(secret, signed(new Date(Date.now() - 10 * 60_000)), body)).toBe(false);
  });

  it('an HMAC keyed with the printed whsec_ string is not the signature', () => {
    const headers = signed(new Date());
    const wrong = createHmac('sha256', secret).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
    expect(headers['webhook-signature']).not.toContain(wrong);
  });
});
