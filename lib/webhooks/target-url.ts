/**
 * Where webhooks may go (SSRF rules). In the cloud: `https://` only, no credentials in the URL, and
 * every address the host resolves to must be public: not private, loopback, link-local (which holds
 * the instance metadata service 169.254.169.254 / fd00:ec2::254), CGNAT, multicast, reserved or an
 * IPv4-mapped, IPv4-translated, IPv4-compatible or NAT64 form of those, however it is spelt
 * (ip-address.ts parses IPv6 to its bytes). The check runs at connect time on the resolved address
 * (http-delivery.ts), so a name that later resolves elsewhere (DNS rebinding) is still refused.
 * The local stage also allows `http://127.0.0.1[:port]` (the webhook sink); nothing else loopback.
 */
import { isIP } from 'node:net';
import { isPublicAddress } from './ip-address';

export { isPublicAddress } from './ip-address';

export const LOCAL_STAGE = 'local';
const LOCAL_LOOPBACK = '127.0.0.1';

export type TargetCheck = { ok: true; url: URL } | { ok: false; reason: string };

const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** The URL rules that need no DNS (the CLI refuses with `reason`; the worker re-checks before every send). */
export function checkTargetUrl(raw: string, stage: string): TargetCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'is not a valid absolute URL' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not contain credentials' };
  if (raw.length > 2048) return { ok: false, reason: 'is longer than 2048 characters' };
  const localLoopback = stage === LOCAL_STAGE && url.protocol === 'http:' && url.hostname === LOCAL_LOOPBACK;
  if (localLoopback) return { ok: true, url };
  if (url.protocol !== 'https:') {
    return { ok: false, reason: stage === LOCAL_STAGE ? 'must be https:// (the local stage also allows http://127.0.0.1)' : 'must be https://' };
  }
  const host = bareHost(url).replace(/\.$/, '').toLowerCase();
  // an IPv6 literal is judged by its bytes (ip-address.ts), whatever isIP thinks of its spelling
  const literal = isIP(host) !== 0 || host.includes(':');
  if (literal && !isPublicAddress(host)) return { ok: false, reason: 'points to a private, loopback, link-local or reserved address' };
  if (host === 'localhost' || host.endsWith('.localhost')) return { ok: false, reason: 'points to a loopback name' };
  return { ok: true, url };
}

/** May the worker connect to `address` for `url`? (after checkTargetUrl accepted the URL) */
export function addressAllowed(address: string, url: URL, stage: string): boolean {
  if (stage === LOCAL_STAGE && url.protocol === 'http:' && url.hostname === LOCAL_LOOPBACK) return address === LOCAL_LOOPBACK;
  return isPublicAddress(address);
}
