/**
 * Which IP addresses a webhook may reach: public unicast only. IPv4 by a block list of the special
 * ranges (node:net BlockList); IPv6 parsed here to its 16 bytes, so that every spelling of one
 * address (`::127.0.0.1`, `::7f00:1`, `0:0:0:0:0:ffff:127.0.0.1`, upper or lower case, with or
 * without zero compression) is judged as the same address:
 *
 *   - only global unicast 2000::/3 may be reached at all: this refuses `::` (unspecified), `::1`
 *     (loopback), every IPv4-compatible `::a.b.c.d`, fc00::/7 (unique local), fe80::/10 (link
 *     local, which holds the metadata service fd00:ec2::254 too: fd00::/8 is unique local),
 *     fec0::/10, ff00::/8 (multicast), 100::/64 (discard) and 64:ff9b::/96 (NAT64);
 *   - within 2000::/3: 2001::/23 (IETF protocol assignments: Teredo, ORCHID, ...), 2001:db8::/32 and
 *     3fff::/20 (documentation), 2002::/16 (6to4, which embeds any IPv4 address) are refused;
 *   - an IPv4-mapped `::ffff:a.b.c.d` or IPv4-translated `::ffff:0:a.b.c.d` address is judged by the
 *     IPv4 address it carries (a resolver may answer a public IPv4 address in mapped form).
 *
 * A zone id (`fe80::1%eth0`) is never public.
 */
import { BlockList, isIPv4 } from 'node:net';

const blockedIpv4 = new BlockList();
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
  blockedIpv4.addSubnet(network, prefix, 'ipv4');
}

/** Special-purpose prefixes inside 2000::/3 (as [bytes of the prefix, prefix length]). */
const BLOCKED_GLOBAL_IPV6: ReadonlyArray<readonly [number[], number]> = [
  [[0x20, 0x01, 0x00, 0x00], 23],
  [[0x20, 0x01, 0x0d, 0xb8], 32],
  [[0x20, 0x02], 16],
  [[0x3f, 0xff, 0x00], 20],
];

/** An IPv6 literal (no brackets) as its 16 bytes, or undefined when it is not exactly one. */
export function parseIpv6(text: string): Uint8Array | undefined {
  if (text.length === 0 || text.length > 45 || text.includes('%')) return undefined;
  let head = text;
  let tailV4: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (lastColon >= 0 && text.slice(lastColon + 1).includes('.')) {
    const v4 = text.slice(lastColon + 1);
    if (!isIPv4(v4)) return undefined;
    tailV4 = v4.split('.').map(Number);
    // the IPv4 tail stands for the last two groups; keep a `::` that ends just before it
    head = text[lastColon - 1] === ':' ? text.slice(0, lastColon + 1) : text.slice(0, lastColon);
  }
  const groupsWanted = tailV4.length ? 6 : 8;
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const parseGroups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
      out.push(parseInt(group, 16));
    }
    return out;
  };
  const left = parseGroups(halves[0]!);
  const right = halves.length === 2 ? parseGroups(halves[1]!) : [];
  if (!left || !right) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    const missing = groupsWanted - left.length - right.length;
    if (missing < 1) return undefined;
    groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  } else {
    if (left.length !== groupsWanted) return undefined;
    groups = left;
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  tailV4.forEach((b, i) => (bytes[12 + i] = b));
  return bytes;
}

const prefixMatches = (bytes: Uint8Array, prefix: readonly number[], length: number): boolean => {
  for (let bit = 0; bit < length; bit += 1) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((bytes[byte]! & mask) !== ((prefix[byte] ?? 0) & mask)) return false;
  }
  return true;
};

const allZero = (bytes: Uint8Array, from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);

/** The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or IPv4-translated (::ffff:0:a.b.c.d) address carries. */
function embeddedIpv4(bytes: Uint8Array): string | undefined {
  const v4 = () => Array.from(bytes.slice(12)).join('.');
  if (allZero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4();
  if (allZero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && bytes[10] === 0 && bytes[11] === 0) return v4();
  return undefined;
}

/** True when `address` (an IPv4 or IPv6 literal, no brackets) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return !blockedIpv4.check(address, 'ipv4');
  const bytes = parseIpv6(address);
  if (!bytes) return false;
  const v4 = embeddedIpv4(bytes);
  if (v4 !== undefined) return !blockedIpv4.check(v4, 'ipv4');
  if ((bytes[0]! & 0xe0) !== 0x20) return false;
  return !BLOCKED_GLOBAL_IPV6.some(([prefix, length]) => prefixMatches(bytes, prefix, length));
}
