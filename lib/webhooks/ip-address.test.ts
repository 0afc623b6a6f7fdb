import { isPublicAddress, parseIpv6 } from './ip-address';
import { addressAllowed, checkTargetUrl } from './target-url';

/** Every spelling of a non-public IPv6 address a webhook target could use. */
const NOT_PUBLIC_IPV6: Array<[string, string]> = [
  ['::', 'unspecified'],
  ['0:0:0:0:0:0:0:0', 'unspecified, uncompressed'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback, uncompressed'],
  ['0000:0000:0000:0000:0000:0000:0000:0001', 'loopback, zero-padded'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::7f00:1', 'IPv4-compatible loopback, hex'],
  ['::8.8.8.8', 'IPv4-compatible (deprecated, never public)'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['0:0:0:0:0:ffff:127.0.0.1', 'IPv4-mapped loopback, uncompressed'],
  ['::FFFF:A9FE:A9FE', 'IPv4-mapped metadata service, upper case'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
  ['::ffff:0:7f00:1', 'IPv4-translated loopback'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated loopback, dotted'],
  ['::ffff:0:a9fe:a9fe', 'IPv4-translated metadata service'],
  ['::ffff:0:a00:1', 'IPv4-translated private'],
  ['64:ff9b::7f00:1', 'NAT64 loopback'],
  ['64:ff9b::a00:1', 'NAT64 private'],
  ['64:ff9b:1::1', 'local-use NAT64'],
  ['fe80::1', 'link-local'],
  ['FE80::1', 'link-local, upper case'],
  ['febf:ffff::1', 'link-local, top of the range'],
  ['fec0::1', 'site-local'],
  ['fc00::1', 'unique local'],
  ['fd00:ec2::254', 'unique local (EC2 metadata service)'],
  ['ff02::1', 'multicast'],
  ['100::1', 'discard'],
  ['2001::1', 'Teredo'],
  ['2001:10::1', 'ORCHID'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation (2024)'],
  ['2002:7f00:1::', '6to4 of loopback'],
  ['2002:808:808::', '6to4 of a public address (embeds any IPv4 address)'],
  ['fe80::1%eth0', 'with a zone id'],
  [':::1', 'malformed'],
  ['1::2::3', 'two compressions'],
  ['1:2:3:4:5:6:7:8:9', 'nine groups'],
  ['::ffff:127.0.0.256', 'bad IPv4 tail'],
  ['12345::1', 'group of five digits'],
];

const NOT_PUBLIC_IPV4 = ['10.1.2.3', '172.16.0.1', '192.168.1.1', '127.0.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255'];

const PUBLIC = ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '2001:4860:4860::8888', '::ffff:8.8.8.8', '::ffff:0:808:808'];

describe('public addresses for webhooks', () => {
  it.each(NOT_PUBLIC_IPV6)('%s (%s) is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(NOT_PUBLIC_IPV4)('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(PUBLIC)('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('parses every spelling of one address to the same bytes', () => {
    const expected = Array.from(parseIpv6('::ffff:7f00:1')!);
    for (const spelling of ['::ffff:127.0.0.1', '0:0:0:0:0:ffff:7f00:1', '0::FFFF:127.0.0.1', '0000:0000:0000:0000:0000:ffff:7f00:0001'])
      expect(Array.from(parseIpv6(spelling)!)).toEqual(expected);
  });

  it.each(NOT_PUBLIC_IPV6.filter(([address]) => !address.includes('%') && parseIpv6(address) !== undefined))(
    'https://[%s]/ (%s) is refused by the URL check and at connect time, on every stage',
    (address) => {
      const raw = `https://[${address}]/hooks`;
      for (const stage of ['prod', 'local']) expect(checkTargetUrl(raw, stage)).toMatchObject({ ok: false });
      const url = new URL(raw);
      expect(addressAllowed(url.hostname.replace(/^\[|\]$/g, ''), url, 'prod')).toBe(false);
    },
  );

  it('an IPv6 loopback in plain http is refused on the local stage too (only http://127.0.0.1 is the sink)', () => {
    for (const address of ['::1', '::127.0.0.1', '::ffff:0:7f00:1', '::ffff:127.0.0.1'])
      expect(checkTargetUrl(`http://[${address}]:4700/`, 'local')).toMatchObject({ ok: false });
  });

  it('a public IPv6 literal is accepted', () => {
    expect(checkTargetUrl('https://[2606:4700:4700::1111]/hooks', 'prod')).toMatchObject({ ok: true });
  });
});
