import { addressAllowed, checkTargetUrl, isPublicAddress } from './target-url';

describe('webhook target URLs (SSRF rules)', () => {
  it.each([
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '127.0.0.1',
    '127.8.8.8',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    'fc00::1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    'not-an-ip',
  ])('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111'])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('cloud stages: https only, no private literal, no credentials, no localhost', () => {
    expect(checkTargetUrl('https://partner.example/hooks', 'prod')).toMatchObject({ ok: true });
    expect(checkTargetUrl('http://partner.example/hooks', 'prod')).toEqual({ ok: false, reason: 'must be https://' });
    expect(checkTargetUrl('http://127.0.0.1:4700/', 'prod')).toEqual({ ok: false, reason: 'must be https://' });
    expect(checkTargetUrl('https://169.254.169.254/latest/meta-data', 'prod')).toMatchObject({ ok: false });
    expect(checkTargetUrl('https://[::1]/', 'prod')).toMatchObject({ ok: false });
    expect(checkTargetUrl('https://localhost/', 'prod')).toMatchObject({ ok: false });
    expect(checkTargetUrl('https://user:pw@partner.example/', 'prod')).toMatchObject({ ok: false, reason: 'must not contain credentials' });
    expect(checkTargetUrl('ftp://partner.example/', 'prod')).toMatchObject({ ok: false });
    expect(checkTargetUrl('partner.example/hooks', 'prod')).toMatchObject({ ok: false, reason: 'is not a valid absolute URL' });
  });

  it('the local stage also allows http://127.0.0.1 and nothing else over http', () => {
    expect(checkTargetUrl('http://127.0.0.1:4700/hooks', 'local')).toMatchObject({ ok: true });
    expect(checkTargetUrl('http://localhost:4700/', 'local')).toMatchObject({ ok: false });
    expect(checkTargetUrl('http://10.0.0.1/', 'local')).toMatchObject({ ok: false });
  });

  it('at connect time, the dialled address decides', () => {
    const local = new URL('http://127.0.0.1:4700/');
    expect(addressAllowed('127.0.0.1', local, 'local')).toBe(true);
    expect(addressAllowed('127.0.0.1', local, 'prod')).toBe(false);
    const named = new URL('https://partner.example/');
    expect(addressAllowed('10.0.0.5', named, 'prod')).toBe(false);
    expect(addressAllowed('10.0.0.5', named, 'local')).toBe(false);
    expect(addressAllowed('93.184.216.34', named, 'prod')).toBe(true);
  });
});
