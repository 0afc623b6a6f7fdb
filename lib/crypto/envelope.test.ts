import { randomBytes } from 'node:crypto';
import { CreateKeyCommand, DecryptCommand, GenerateDataKeyCommand, InvalidCiphertextException, KMSClient, KMSServiceException } from '@aws-sdk/client-kms';
import { startKmsServer, type KmsServer } from '../local/kms-server';
import { DEFAULT_DATA_KEY_MAX_AGE_MS, DEFAULT_DATA_KEY_MAX_USES } from './data-key-cache';
import { EnvelopeEncryptor } from './envelope';
import { parseEnvelope, serializeEnvelope, type Envelope } from './envelope-format';
import { EnvelopeDecryptError, KeyServiceError, KeyServiceUnavailableError } from './errors';

const ALIAS = 'alias/interop-local';
const PHI = 'PID|1||MRN-123456||DOE^JANE||19700101|F';
const CTX = { sender: 'lab-acme', resultId: 'res-000042', recordType: 'lab-result' };

function client(url: string): KMSClient {
  return new KMSClient({ endpoint: url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
}

/** A pass-through spy on kms.send that counts calls per command type. */
function countKmsCalls(kms: KMSClient) {
  const spy = jest.spyOn(kms, 'send');
  const count = (type: abstract new (...args: never[]) => unknown) => spy.mock.calls.filter(([command]) => command instanceof type).length;
  return {
    spy,
    generateDataKey: () => count(GenerateDataKeyCommand),
    decrypt: () => count(DecryptCommand),
  };
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

function expectNoSecrets(err: Error): void {
  for (const secret of [PHI, 'MRN-123456', CTX.resultId, CTX.sender]) {
    expect(err.message).not.toContain(secret);
    expect(String(err.stack)).not.toContain(secret);
  }
}

/** base64 with one bit flipped at byte `at` (negative = from the end). */
function flip(b64: string, at = 0): string {
  const bytes = Buffer.from(b64, 'base64');
  const i = at < 0 ? bytes.length + at : at;
  bytes[i]! ^= 0x01;
  return bytes.toString('base64');
}

describe('EnvelopeEncryptor against the local KMS server (real KMSClient)', () => {
  let server: KmsServer;
  let kms: KMSClient;
  let keyArn: string;

  beforeAll(async () => {
    server = await startKmsServer({ host: '127.0.0.1', port: 0, keys: [ALIAS] });
    kms = client(server.url);
    keyArn = server.keyArns[0]!;
  });
  afterAll(async () => {
    kms.destroy();
    await server.close();
  });
  afterEach(() => jest.restoreAllMocks());

  describe('format and round trip', () => {
    it('round trips strings and buffers, and the envelope has the documented shape', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS, purpose: 'lab-result' });
      const env = await enc.encrypt(PHI, CTX);
      expect(Object.keys(env)).toEqual(['v', 'alg', 'kid', 'edk', 'kctx', 'iv', 'tag', 'ct', 'ctx']);
      expect(env).toMatchObject({ v: 1, alg: 'AES-256-GCM', kid: keyArn, kctx: { purpose: 'lab-result', service: 'interop' }, ctx: CTX });
      expect(Buffer.from(env.iv, 'base64')).toHaveLength(12);
      expect(Buffer.from(env.tag, 'base64')).toHaveLength(16);
      expect(Buffer.from(env.ct, 'base64')).toHaveLength(Buffer.byteLength(PHI));
      expect(JSON.stringify(env)).not.toContain('MRN-123456');
      expect((await enc.decrypt(env, CTX)).toString('utf8')).toBe(PHI);

      const binary = randomBytes(1000);
      const envB = await enc.encrypt(binary, CTX);
      expect((await enc.decrypt(envB, CTX)).equals(binary)).toBe(true);

      const empty = await enc.encrypt('', CTX);
      expect(await enc.decrypt(empty, CTX)).toHaveLength(0);
    });

    it('survives JSON storage, the compact string form, and any key order of the expected context', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const env = await enc.encrypt(PHI, CTX);
      const reader = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const reordered = { recordType: CTX.recordType, sender: CTX.sender, resultId: CTX.resultId };
      expect((await reader.decrypt(JSON.parse(JSON.stringify(env)) as Envelope, reordered)).toString()).toBe(PHI);
      const compact = serializeEnvelope(env);
      expect(typeof compact).toBe('string');
      expect((await reader.decrypt(compact, reordered)).toString()).toBe(PHI);
      expect(parseEnvelope(compact).envelope).toEqual(env);
    });

    it('uses fresh IVs: the same plaintext and context encrypt differently', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const a = await enc.encrypt(PHI, CTX);
      const b = await enc.encrypt(PHI, CTX);
      expect(a.edk).toBe(b.edk); // same cached data key
      expect(a.iv).not.toBe(b.iv);
      expect(a.ct).not.toBe(b.ct);
    });

    it('round trips a 5 MB payload', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const big = randomBytes(5 * 1024 * 1024);
      const env = await enc.encrypt(big, CTX);
      const reader = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      expect((await reader.decrypt(serializeEnvelope(env), CTX)).equals(big)).toBe(true);
    });
  });

  describe('context binding and tampering', () => {
    it('KMS level: the data key only decrypts under its own (PHI free) data key context', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS, purpose: 'lab-result' });
      const calls = countKmsCalls(kms);
      const env = await enc.encrypt(PHI, CTX);
      const gdk = calls.spy.mock.calls.map(([c]) => c).find((c) => c instanceof GenerateDataKeyCommand) as GenerateDataKeyCommand;
      expect(gdk.input.EncryptionContext).toEqual({ purpose: 'lab-result', service: 'interop' }); // no record ids go to KMS / CloudTrail
      const edk = Buffer.from(env.edk, 'base64');
      const ok = await kms.send(new DecryptCommand({ CiphertextBlob: edk, EncryptionContext: env.kctx }));
      expect(ok.Plaintext).toHaveLength(32);
      const err = await rejection(kms.send(new DecryptCommand({ CiphertextBlob: edk, EncryptionContext: { purpose: 'form', service: 'interop' } })));
      expect(err).toBeInstanceOf(InvalidCiphertextException);
    });

    it('envelope level: a different expected context fails before any KMS call, without echoing values', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const env = await enc.encrypt(PHI, CTX);
      const reader = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const calls = countKmsCalls(kms);
      const wrong: Record<string, string>[] = [{ ...CTX, resultId: 'res-000043' }, { sender: CTX.sender, resultId: CTX.resultId }, { ...CTX, extra: 'x' }, {}];
      for (const expected of wrong) {
        const err = await rejection(reader.decrypt(env, expected));
        expect(err).toBeInstanceOf(EnvelopeDecryptError);
        expect(err.name).toBe('EnvelopeDecryptError');
        expect((err as EnvelopeDecryptError).reason).toBe('context-mismatch');
        expectNoSecrets(err);
      }
      expect(calls.decrypt()).toBe(0);
    });

    it('relabelling a record (rewriting its stored ctx to another record’s) fails GCM authentication', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const env = await enc.encrypt(PHI, CTX);
      const other = { ...CTX, resultId: 'res-000043' };
      const forged: Envelope = { ...env, ctx: other };
      for (const reader of [enc, new EnvelopeEncryptor({ kms, keyId: ALIAS })]) {
        const err = await rejection(reader.decrypt(forged, other));
        expect(err).toBeInstanceOf(EnvelopeDecryptError);
        expect((err as EnvelopeDecryptError).reason).toBe('authentication-failed');
        expectNoSecrets(err);
      }
    });

    it('altered ciphertext, iv or tag fail authentication (warm and cold caches)', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const env = await enc.encrypt(PHI, CTX);
      const tampered: Envelope[] = [
        { ...env, ct: flip(env.ct, 0) },
        { ...env, ct: flip(env.ct, -1) },
        { ...env, iv: flip(env.iv, 5) },
        { ...env, tag: flip(env.tag, 15) },
        { ...env, ct: Buffer.from(env.ct, 'base64').subarray(1).toString('base64') },
      ];
      for (const reader of [enc, new EnvelopeEncryptor({ kms, keyId: ALIAS })]) {
        for (const bad of tampered) {
          const err = await rejection(reader.decrypt(bad, CTX));
          expect(err).toBeInstanceOf(EnvelopeDecryptError);
          expect((err as EnvelopeDecryptError).reason).toBe('authentication-failed');
          expect(err.cause).toBeDefined(); // node:crypto's error (another realm under jest, so no instanceof)
          expectNoSecrets(err);
        }
      }
    });

    it('altered edk, kctx or kid are refused by KMS (data-key-rejected)', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS, purpose: 'lab-result' });
      const env = await enc.encrypt(PHI, CTX);
      const other = await kms.send(new CreateKeyCommand({ Description: 'another key' }));
      const tampered: Envelope[] = [
        { ...env, edk: flip(env.edk, -1) },
        { ...env, kctx: { ...env.kctx, purpose: 'form' } },
        { ...env, kid: other.KeyMetadata!.Arn! },
      ];
      for (const reader of [enc, new EnvelopeEncryptor({ kms, keyId: ALIAS })]) {
        for (const bad of tampered) {
          const err = await rejection(reader.decrypt(bad, CTX));
          expect(err).toBeInstanceOf(EnvelopeDecryptError);
          expect((err as EnvelopeDecryptError).reason).toBe('data-key-rejected');
          expect((err.cause as Error).name).toMatch(/InvalidCiphertextException|IncorrectKeyException/);
        }
      }
    });

    it('malformed or unknown-version envelopes are refused before any KMS call', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const env = await enc.encrypt(PHI, CTX);
      const calls = countKmsCalls(kms);
      const cases: [unknown, string][] = [
        ['not json', 'malformed'],
        [null, 'malformed'],
        [[env], 'malformed'],
        [{ ...env, v: 2 }, 'unsupported-version'],
        [{ ...env, alg: 'AES-128-CBC' }, 'unsupported-version'],
        [{ ...env, iv: Buffer.alloc(16).toString('base64') }, 'malformed'],
        [{ ...env, tag: env.tag.slice(0, -4) }, 'malformed'],
        [{ ...env, ct: env.ct + '!' }, 'malformed'],
        [{ ...env, edk: '' }, 'malformed'],
        [{ ...env, kid: 7 }, 'malformed'],
        [{ ...env, ctx: undefined }, 'malformed'],
        [{ ...env, ctx: { ...CTX, n: 1 } }, 'malformed'],
        [{ ...env, kctx: 'x' }, 'malformed'],
      ];
      for (const [input, reason] of cases) {
        const err = await rejection(enc.decrypt(input as Envelope, CTX));
        expect(err).toBeInstanceOf(EnvelopeDecryptError);
        expect((err as EnvelopeDecryptError).reason).toBe(reason);
        expectNoSecrets(err);
      }
      expect(calls.decrypt()).toBe(0);
    });

    it('caller bugs are TypeErrors: non-string context values, bad purpose labels', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      await expect(enc.encrypt(PHI, { id: 1 } as unknown as Record<string, string>)).rejects.toThrow(TypeError);
      await expect(enc.encrypt(PHI, CTX, { purpose: 'DOE JANE' })).rejects.toThrow(TypeError);
      expect(() => new EnvelopeEncryptor({ kms, keyId: ALIAS, service: '' })).toThrow(TypeError);
      expect(() => new EnvelopeEncryptor({ kms, keyId: '' })).toThrow(TypeError);
    });
  });

  describe('data key caching', () => {
    it('exports the default bounds: 5 minutes, 10,000 uses', () => {
      expect(DEFAULT_DATA_KEY_MAX_AGE_MS).toBe(5 * 60 * 1000);
      expect(DEFAULT_DATA_KEY_MAX_USES).toBe(10_000);
    });

    it('one GenerateDataKey serves N < maxUses encryptions; a new one after maxUses', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS, cache: { maxUses: 50 } });
      const calls = countKmsCalls(kms);
      const envs: Envelope[] = [];
      for (let i = 0; i < 49; i++) envs.push(await enc.encrypt(`${PHI} #${i}`, { ...CTX, resultId: `res-${i}` }));
      expect(calls.generateDataKey()).toBe(1);
      expect(new Set(envs.map((e) => e.edk)).size).toBe(1);
      envs.push(await enc.encrypt(PHI, CTX)); // use 50 of 50
      expect(calls.generateDataKey()).toBe(1);
      envs.push(await enc.encrypt(PHI, CTX)); // 51st: new data key
      expect(calls.generateDataKey()).toBe(2);
      expect(envs[50]!.edk).not.toBe(envs[0]!.edk);
      // every record still decrypts, under its own context
      for (let i = 0; i < 49; i++) expect((await enc.decrypt(envs[i]!, { ...CTX, resultId: `res-${i}` })).toString()).toBe(`${PHI} #${i}`);
    });

    it('a new GenerateDataKey after maxAgeMs (injected clock)', async () => {
      let now = Date.parse('2025-01-01T00:00:00Z');
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS, cache: { maxAgeMs: 60_000 }, clock: () => now });
      const calls = countKmsCalls(kms);
      await enc.encrypt(PHI, CTX);
      now += 59_000;
      await enc.encrypt(PHI, CTX);
      expect(calls.generateDataKey()).toBe(1);
      now += 1_000;
      await enc.encrypt(PHI, CTX);
      expect(calls.generateDataKey()).toBe(2);
    });

    it('a new GenerateDataKey after the default 5 minutes (jest fake Date)', async () => {
      jest.useFakeTimers({
        doNotFake: [
          'nextTick',
          'setImmediate',
          'clearImmediate',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'queueMicrotask',
          'hrtime',
          'performance',
        ],
      });
      try {
        jest.setSystemTime(Date.parse('2025-01-01T00:00:00Z'));
        const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
        const calls = countKmsCalls(kms);
        await enc.encrypt(PHI, CTX);
        jest.setSystemTime(Date.parse('2025-01-01T00:04:59Z'));
        await enc.encrypt(PHI, CTX);
        expect(calls.generateDataKey()).toBe(1);
        jest.setSystemTime(Date.parse('2025-01-01T00:05:00Z'));
        await enc.encrypt(PHI, CTX);
        expect(calls.generateDataKey()).toBe(2);
      } finally {
        jest.useRealTimers();
      }
    });

    it('concurrent encryptions on a cold cache share one GenerateDataKey', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const calls = countKmsCalls(kms);
      const envs = await Promise.all(Array.from({ length: 20 }, (_, i) => enc.encrypt(PHI, { ...CTX, resultId: `r${i}` })));
      expect(calls.generateDataKey()).toBe(1);
      expect(new Set(envs.map((e) => e.edk)).size).toBe(1);
    });

    it('different purposes get different data keys', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS, purpose: 'lab-result' });
      const calls = countKmsCalls(kms);
      const a = await enc.encrypt(PHI, CTX);
      const b = await enc.encrypt(PHI, CTX, { purpose: 'form-packet' });
      await enc.encrypt(PHI, CTX, { purpose: 'form-packet' });
      expect(calls.generateDataKey()).toBe(2);
      expect(a.kctx).toEqual({ purpose: 'lab-result', service: 'interop' });
      expect(b.kctx).toEqual({ purpose: 'form-packet', service: 'interop' });
      expect(a.edk).not.toBe(b.edk);
    });

    it('reading many records costs one KMS Decrypt per data key; the writer itself needs none', async () => {
      const writer = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const envs = [];
      for (let i = 0; i < 30; i++) envs.push(await writer.encrypt(`${PHI} ${i}`, { ...CTX, resultId: `r${i}` }));
      const calls = countKmsCalls(kms);
      for (let i = 0; i < 30; i++) await writer.decrypt(envs[i]!, { ...CTX, resultId: `r${i}` });
      expect(calls.decrypt()).toBe(0);

      const reader = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const out = await Promise.all(envs.map((e, i) => reader.decrypt(e, { ...CTX, resultId: `r${i}` })));
      expect(out.map((b) => b.toString())).toEqual(envs.map((_, i) => `${PHI} ${i}`));
      expect(calls.decrypt()).toBe(1);
    });

    it('decrypted data keys expire too', async () => {
      const writer = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const env = await writer.encrypt(PHI, CTX);
      let now = 0;
      const reader = new EnvelopeEncryptor({ kms, keyId: ALIAS, decryptCache: { maxAgeMs: 1_000 }, clock: () => now });
      const calls = countKmsCalls(kms);
      await reader.decrypt(env, CTX);
      await reader.decrypt(env, CTX);
      expect(calls.decrypt()).toBe(1);
      now = 1_000;
      await reader.decrypt(env, CTX);
      expect(calls.decrypt()).toBe(2);
    });

    it('clearCache forces fresh KMS calls', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const env = await enc.encrypt(PHI, CTX);
      enc.clearCache();
      const calls = countKmsCalls(kms);
      await enc.decrypt(env, CTX);
      await enc.encrypt(PHI, CTX);
      expect([calls.decrypt(), calls.generateDataKey()]).toEqual([1, 1]);
    });

    it('zeroes the SDK’s plaintext data key buffer after taking a copy', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      const calls = countKmsCalls(kms);
      await enc.encrypt(PHI, CTX);
      const result = (await calls.spy.mock.results[0]!.value) as { Plaintext: Uint8Array };
      expect(result.Plaintext).toHaveLength(32);
      expect(result.Plaintext.every((b) => b === 0)).toBe(true);
    });
  });

  describe('KMS failures', () => {
    const throttled = () =>
      new KMSServiceException({ name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'Rate exceeded' });

    it('throttling on GenerateDataKey -> KeyServiceUnavailableError, and the next call recovers', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      (jest.spyOn(kms, 'send') as jest.SpyInstance).mockRejectedValueOnce(throttled());
      const err = await rejection(enc.encrypt(PHI, CTX));
      expect(err).toBeInstanceOf(KeyServiceUnavailableError);
      expect(err).toMatchObject({ name: 'KeyServiceUnavailableError', operation: 'GenerateDataKey', code: 'ThrottlingException', retryAfterSeconds: 1 });
      expect((err.cause as Error).name).toBe('ThrottlingException');
      expectNoSecrets(err);
      await expect(enc.encrypt(PHI, CTX)).resolves.toMatchObject({ v: 1 });
    });

    it('throttling on Decrypt -> KeyServiceUnavailableError', async () => {
      const env = await new EnvelopeEncryptor({ kms, keyId: ALIAS }).encrypt(PHI, CTX);
      const reader = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      (jest.spyOn(kms, 'send') as jest.SpyInstance).mockRejectedValueOnce(throttled());
      const err = await rejection(reader.decrypt(env, CTX));
      expect(err).toBeInstanceOf(KeyServiceUnavailableError);
      expect(err).toMatchObject({ operation: 'Decrypt', code: 'ThrottlingException' });
      expectNoSecrets(err);
      expect((await reader.decrypt(env, CTX)).toString()).toBe(PHI);
    });

    it('5xx answers and an unreachable endpoint -> KeyServiceUnavailableError', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: ALIAS });
      (jest.spyOn(kms, 'send') as jest.SpyInstance).mockRejectedValueOnce(
        new KMSServiceException({ name: 'KMSInternalException', $fault: 'server', $metadata: { httpStatusCode: 500 }, message: 'internal' }),
      );
      expect(await rejection(enc.encrypt(PHI, CTX))).toBeInstanceOf(KeyServiceUnavailableError);

      const gone = await startKmsServer({ host: '127.0.0.1', port: 0, keys: [ALIAS] });
      await gone.close();
      const deadKms = client(gone.url);
      try {
        const err = await rejection(new EnvelopeEncryptor({ kms: deadKms, keyId: ALIAS }).encrypt(PHI, CTX));
        expect(err).toBeInstanceOf(KeyServiceUnavailableError);
        expect((err as KeyServiceUnavailableError).code).toBe('ECONNREFUSED');
      } finally {
        deadKms.destroy();
      }
    });

    it('lasting refusals (unknown key) -> KeyServiceError, not 503', async () => {
      const enc = new EnvelopeEncryptor({ kms, keyId: 'alias/does-not-exist' });
      const err = await rejection(enc.encrypt(PHI, CTX));
      expect(err).toBeInstanceOf(KeyServiceError);
      expect(err).toMatchObject({ name: 'KeyServiceError', operation: 'GenerateDataKey', code: 'NotFoundException' });
      expectNoSecrets(err);
    });
  });
});
