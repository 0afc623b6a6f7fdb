import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateAliasCommand,
  CreateKeyCommand,
  DecryptCommand,
  DescribeKeyCommand,
  EncryptCommand,
  GenerateDataKeyCommand,
  GenerateDataKeyWithoutPlaintextCommand,
  IncorrectKeyException,
  InvalidCiphertextException,
  KMSClient,
  ListAliasesCommand,
  NotFoundException,
  AlreadyExistsException,
} from '@aws-sdk/client-kms';
import { startKmsServer, type KmsServer } from './kms-server';

const ALIAS = 'alias/interop-local';

function client(url: string): KMSClient {
  return new KMSClient({ endpoint: url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('local KMS server (real @aws-sdk/client-kms)', () => {
  let server: KmsServer;
  let kms: KMSClient;

  beforeAll(async () => {
    server = await startKmsServer({ host: '127.0.0.1', port: 0, keys: [ALIAS] });
    kms = client(server.url);
  });
  afterAll(async () => {
    kms.destroy();
    await server.close();
  });

  it('listens on a free loopback port', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.keyArns[0]).toMatch(/^arn:aws:kms:us-east-1:000000000000:key\/[0-9a-f-]{36}$/);
  });

  it('refuses to bind anywhere but 127.0.0.1', async () => {
    await expect(startKmsServer({ host: '0.0.0.0', port: 0 })).rejects.toThrow(/127\.0\.0\.1 only/);
  });

  it('DescribeKey resolves the alias, the key id and the key ARN to the same key', async () => {
    const byAlias = await kms.send(new DescribeKeyCommand({ KeyId: ALIAS }));
    const meta = byAlias.KeyMetadata!;
    expect(meta.Arn).toBe(server.keyArns[0]);
    expect(meta.KeyUsage).toBe('ENCRYPT_DECRYPT');
    expect(meta.KeyState).toBe('Enabled');
    expect(meta.KeySpec).toBe('SYMMETRIC_DEFAULT');
    expect(meta.CreationDate).toBeInstanceOf(Date);
    expect(Math.abs(meta.CreationDate!.getTime() - Date.now())).toBeLessThan(60_000);
    const byId = await kms.send(new DescribeKeyCommand({ KeyId: meta.KeyId }));
    const byArn = await kms.send(new DescribeKeyCommand({ KeyId: meta.Arn }));
    const byAliasArn = await kms.send(new DescribeKeyCommand({ KeyId: `arn:aws:kms:us-east-1:000000000000:${ALIAS}` }));
    expect([byId.KeyMetadata!.Arn, byArn.KeyMetadata!.Arn, byAliasArn.KeyMetadata!.Arn]).toEqual([meta.Arn, meta.Arn, meta.Arn]);
  });

  it('GenerateDataKey AES_256 returns a 32 byte key that Decrypt recovers under the same context', async () => {
    const ctx = { service: 'interop', purpose: 'lab-result' };
    const dk = await kms.send(new GenerateDataKeyCommand({ KeyId: ALIAS, KeySpec: 'AES_256', EncryptionContext: ctx }));
    expect(dk.Plaintext).toHaveLength(32);
    expect(dk.KeyId).toBe(server.keyArns[0]);
    const blob = Buffer.from(dk.CiphertextBlob!);
    expect(blob[0]).toBe(1); // format version
    expect(blob.includes(Buffer.from(dk.Plaintext!))).toBe(false);
    // context key order does not matter
    const out = await kms.send(new DecryptCommand({ CiphertextBlob: dk.CiphertextBlob, EncryptionContext: { purpose: 'lab-result', service: 'interop' } }));
    expect(Buffer.from(out.Plaintext!).equals(Buffer.from(dk.Plaintext!))).toBe(true);
    expect(out.KeyId).toBe(server.keyArns[0]);
    expect(out.EncryptionAlgorithm).toBe('SYMMETRIC_DEFAULT');
  });

  it('GenerateDataKey honours NumberOfBytes and AES_128, and rejects both or neither', async () => {
    const n = await kms.send(new GenerateDataKeyCommand({ KeyId: ALIAS, NumberOfBytes: 64 }));
    expect(n.Plaintext).toHaveLength(64);
    const a = await kms.send(new GenerateDataKeyCommand({ KeyId: ALIAS, KeySpec: 'AES_128' }));
    expect(a.Plaintext).toHaveLength(16);
    expect(await rejection(kms.send(new GenerateDataKeyCommand({ KeyId: ALIAS, KeySpec: 'AES_256', NumberOfBytes: 32 })))).toMatchObject({
      name: 'ValidationException',
    });
    expect(await rejection(kms.send(new GenerateDataKeyCommand({ KeyId: ALIAS })))).toMatchObject({ name: 'ValidationException' });
    expect(await rejection(kms.send(new GenerateDataKeyCommand({ KeyId: ALIAS, NumberOfBytes: 1025 })))).toMatchObject({ name: 'ValidationException' });
  });

  it('GenerateDataKeyWithoutPlaintext returns only the blob', async () => {
    const out = await kms.send(new GenerateDataKeyWithoutPlaintextCommand({ KeyId: ALIAS, KeySpec: 'AES_256', EncryptionContext: { a: '1' } }));
    expect((out as { Plaintext?: unknown }).Plaintext).toBeUndefined();
    const dec = await kms.send(new DecryptCommand({ CiphertextBlob: out.CiphertextBlob, EncryptionContext: { a: '1' } }));
    expect(dec.Plaintext).toHaveLength(32);
  });

  it('Encrypt / Decrypt round trip binds the encryption context', async () => {
    const secret = Buffer.from('not-a-real-secret-but-treat-it-as-one');
    const enc = await kms.send(new EncryptCommand({ KeyId: ALIAS, Plaintext: secret, EncryptionContext: { tenant: 't1', kind: 'x' } }));
    expect(enc.EncryptionAlgorithm).toBe('SYMMETRIC_DEFAULT');
    const dec = await kms.send(new DecryptCommand({ CiphertextBlob: enc.CiphertextBlob, EncryptionContext: { kind: 'x', tenant: 't1' } }));
    expect(Buffer.from(dec.Plaintext!).equals(secret)).toBe(true);

    const wrongContexts: (Record<string, string> | undefined)[] = [
      { tenant: 't2', kind: 'x' },
      { tenant: 't1' },
      { tenant: 't1', kind: 'x', extra: '' },
      undefined,
    ];
    for (const wrong of wrongContexts) {
      const err = await rejection(kms.send(new DecryptCommand({ CiphertextBlob: enc.CiphertextBlob, EncryptionContext: wrong })));
      expect(err).toBeInstanceOf(InvalidCiphertextException);
      expect(err.name).toBe('InvalidCiphertextException');
      expect((err as InvalidCiphertextException).$metadata.httpStatusCode).toBe(400);
      expect(err.message).not.toContain('t1');
      expect(err.message).not.toContain(secret.toString());
    }
  });

  it('rejects tampered and truncated ciphertext blobs with InvalidCiphertextException', async () => {
    const enc = await kms.send(new EncryptCommand({ KeyId: ALIAS, Plaintext: Buffer.from('payload'), EncryptionContext: { a: 'b' } }));
    const blob = Buffer.from(enc.CiphertextBlob!);
    const variants: Buffer[] = [];
    for (const at of [0, 2 + blob[1]! - 1, 2 + blob[1]!, 2 + blob[1]! + 12, blob.length - 1]) {
      const copy = Buffer.from(blob);
      copy[at]! ^= 0x01;
      variants.push(copy);
    }
    variants.push(blob.subarray(0, blob.length - 1), blob.subarray(0, 5));
    for (const bad of variants) {
      const err = await rejection(kms.send(new DecryptCommand({ CiphertextBlob: bad, EncryptionContext: { a: 'b' } })));
      // flipping a key id byte names a key that does not exist: NotFound; everything else: InvalidCiphertext
      expect(['InvalidCiphertextException', 'NotFoundException']).toContain(err.name);
    }
    const flippedTag = Buffer.from(blob);
    flippedTag[2 + blob[1]! + 12]! ^= 0x80;
    expect(await rejection(kms.send(new DecryptCommand({ CiphertextBlob: flippedTag, EncryptionContext: { a: 'b' } })))).toBeInstanceOf(
      InvalidCiphertextException,
    );
  });

  it('unknown keys give NotFoundException; a Decrypt KeyId naming another key gives IncorrectKeyException', async () => {
    expect(await rejection(kms.send(new DescribeKeyCommand({ KeyId: 'alias/nope' })))).toBeInstanceOf(NotFoundException);
    expect(await rejection(kms.send(new GenerateDataKeyCommand({ KeyId: '00000000-0000-0000-0000-000000000000', KeySpec: 'AES_256' })))).toBeInstanceOf(
      NotFoundException,
    );
    expect(await rejection(kms.send(new EncryptCommand({ KeyId: 'alias/nope', Plaintext: Buffer.from('x') })))).toBeInstanceOf(NotFoundException);

    const other = await kms.send(new CreateKeyCommand({ Description: 'other' }));
    const enc = await kms.send(new EncryptCommand({ KeyId: ALIAS, Plaintext: Buffer.from('x') }));
    const err = await rejection(kms.send(new DecryptCommand({ CiphertextBlob: enc.CiphertextBlob, KeyId: other.KeyMetadata!.KeyId })));
    expect(err).toBeInstanceOf(IncorrectKeyException);
    const ok = await kms.send(new DecryptCommand({ CiphertextBlob: enc.CiphertextBlob, KeyId: ALIAS }));
    expect(Buffer.from(ok.Plaintext!).toString()).toBe('x');
  });

  it('CreateKey, CreateAlias and ListAliases', async () => {
    const created = await kms.send(new CreateKeyCommand({ Description: 'for aliases' }));
    const keyId = created.KeyMetadata!.KeyId!;
    await kms.send(new CreateAliasCommand({ AliasName: 'alias/second', TargetKeyId: keyId }));
    expect(await rejection(kms.send(new CreateAliasCommand({ AliasName: 'alias/second', TargetKeyId: keyId })))).toBeInstanceOf(AlreadyExistsException);
    expect(await rejection(kms.send(new CreateAliasCommand({ AliasName: 'alias/third', TargetKeyId: 'alias/second' })))).toBeInstanceOf(NotFoundException);
    expect(await rejection(kms.send(new CreateAliasCommand({ AliasName: 'alias/aws/reserved', TargetKeyId: keyId })))).toMatchObject({
      name: 'ValidationException',
    });

    const all = await kms.send(new ListAliasesCommand({}));
    expect(all.Aliases!.map((a) => a.AliasName)).toEqual(expect.arrayContaining([ALIAS, 'alias/second']));
    const mine = await kms.send(new ListAliasesCommand({ KeyId: keyId }));
    expect(mine.Aliases).toEqual([
      expect.objectContaining({ AliasName: 'alias/second', TargetKeyId: keyId, AliasArn: 'arn:aws:kms:us-east-1:000000000000:alias/second' }),
    ]);
    const described = await kms.send(new DescribeKeyCommand({ KeyId: 'alias/second' }));
    expect(described.KeyMetadata!.Description).toBe('for aliases');
  });

  it('requires an Authorization header and a known TrentService target (raw HTTP)', async () => {
    const post = (headers: Record<string, string>, body = '{}') => fetch(server.url, { method: 'POST', headers, body });
    const json = { 'content-type': 'application/x-amz-json-1.1' };

    const noAuth = await post({ ...json, 'x-amz-target': 'TrentService.DescribeKey' }, JSON.stringify({ KeyId: ALIAS }));
    expect(noAuth.status).toBe(400);
    expect(await noAuth.json()).toEqual({ __type: 'MissingAuthenticationTokenException', message: expect.any(String) });

    const auth = { ...json, authorization: 'AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/kms/aws4_request, SignedHeaders=host, Signature=00' };
    const unknown = await post({ ...auth, 'x-amz-target': 'TrentService.ScheduleKeyDeletion' });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { __type: string }).__type).toBe('UnknownOperationException');

    const badJson = await post({ ...auth, 'x-amz-target': 'TrentService.DescribeKey' }, '{nope');
    expect(((await badJson.json()) as { __type: string }).__type).toBe('SerializationException');

    const described = await post({ ...auth, 'x-amz-target': 'TrentService.DescribeKey' }, JSON.stringify({ KeyId: ALIAS }));
    expect(described.status).toBe(200);
    expect(described.headers.get('content-type')).toBe('application/x-amz-json-1.1');
    expect(((await described.json()) as { KeyMetadata: { Arn: string } }).KeyMetadata.Arn).toBe(server.keyArns[0]);

    const huge = await post({ ...auth, 'x-amz-target': 'TrentService.Encrypt' }, JSON.stringify({ KeyId: ALIAS, Plaintext: 'A'.repeat(1_100_000) }));
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { __type: string }).__type).toBe('ValidationException');
  });
});

describe('local KMS server persistence', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kms-server-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a restarted server with the same dataDir decrypts old ciphertexts and keeps aliases', async () => {
    const dataDir = join(dir, 'kms');
    const first = await startKmsServer({ host: '127.0.0.1', port: 0, dataDir, keys: [ALIAS] });
    const kms1 = client(first.url);
    const enc = await kms1.send(new EncryptCommand({ KeyId: ALIAS, Plaintext: Buffer.from('survives restarts'), EncryptionContext: { a: 'b' } }));
    const dk = await kms1.send(new GenerateDataKeyCommand({ KeyId: ALIAS, KeySpec: 'AES_256', EncryptionContext: { service: 'interop' } }));
    kms1.destroy();
    await first.close();

    const file = join(dataDir, 'kms-keys.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8')).format).toBe('local-kms/v1');

    const second = await startKmsServer({ host: '127.0.0.1', port: 0, dataDir, keys: [ALIAS] });
    const kms2 = client(second.url);
    try {
      expect(second.keyArns).toEqual(first.keyArns); // alias not re-created
      const dec = await kms2.send(new DecryptCommand({ CiphertextBlob: enc.CiphertextBlob, EncryptionContext: { a: 'b' } }));
      expect(Buffer.from(dec.Plaintext!).toString()).toBe('survives restarts');
      const key = await kms2.send(new DecryptCommand({ CiphertextBlob: dk.CiphertextBlob, EncryptionContext: { service: 'interop' } }));
      expect(Buffer.from(key.Plaintext!).equals(Buffer.from(dk.Plaintext!))).toBe(true);
    } finally {
      kms2.destroy();
      await second.close();
    }
  });

  it('refuses to start on a corrupted key file rather than silently minting new keys', async () => {
    const dataDir = join(dir, 'kms');
    const first = await startKmsServer({ host: '127.0.0.1', port: 0, dataDir, keys: [ALIAS] });
    await first.close();
    const file = join(dataDir, 'kms-keys.json');
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { keys: { material: string }[] };
    parsed.keys[0]!.material = 'AAAA';
    writeFileSync(file, JSON.stringify(parsed));
    await expect(startKmsServer({ host: '127.0.0.1', port: 0, dataDir, keys: [ALIAS] })).rejects.toThrow(/invalid key entry/);
  });

  it('without a dataDir keys are in memory only: a restart cannot decrypt', async () => {
    const first = await startKmsServer({ host: '127.0.0.1', port: 0, keys: [ALIAS] });
    const kms1 = client(first.url);
    const enc = await kms1.send(new EncryptCommand({ KeyId: ALIAS, Plaintext: Buffer.from('gone') }));
    kms1.destroy();
    await first.close();

    const second = await startKmsServer({ host: '127.0.0.1', port: 0, keys: [ALIAS] });
    const kms2 = client(second.url);
    try {
      expect(second.keyArns).not.toEqual(first.keyArns);
      expect(await rejection(kms2.send(new DecryptCommand({ CiphertextBlob: enc.CiphertextBlob })))).toBeInstanceOf(NotFoundException);
    } finally {
      kms2.destroy();
      await second.close();
    }
  });
});
