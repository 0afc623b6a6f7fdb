/**
 * Where webhooks may go (SSRF rules). In the cloud: `https://` only, no credentials in the URL, and
 * every address the host resolves to must be public: not private, loopback, link-local (which holds
 * the instance metadata service 169.254.169.254 / fd00:ec2::254), CGNAT, multicast, reserved or an
 * IPv4-mapped / NAT64 form of those. The check runs at connect time on the resolved address
 * (http-delivery.ts), so a name that later resolves elsewhere (DNS rebinding) is still refused.
 * The local stage also allows `http://127.0.0.1[:port]` (the webhook sink); nothing else loopback.
 */
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** True when `address` (an IP literal) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

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
  const host = bareHost(url);
  if (isIP(host) !== 0 && !isPublicAddress(host)) return { ok: false, reason: 'points to a private, loopback, link-local or reserved address' };
  if (host === 'localhost' || host.endsWith('.localhost')) return { ok: false, reason: 'points to a loopback name' };
  return { ok: true, url };
}

/** May the worker connect to `address` for `url`? (after checkTargetUrl accepted the URL) */
export function addressAllowed(address: string, url: URL, stage: string): boolean {
  if (stage === LOCAL_STAGE && url.protocol === 'http:' && url.hostname === LOCAL_LOOPBACK) return address === LOCAL_LOOPBACK;
  return isPublicAddress(address);
}
