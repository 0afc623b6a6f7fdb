/**
 * Envelope encryption of records with AWS KMS data keys (format: envelope-format.ts).
 *
 *   const enc = new EnvelopeEncryptor({ kms, keyId: process.env.KMS_KEY_ID!, purpose: 'lab-result' });
 *   const env = await enc.encrypt(hl7Text, { sender, resultId, recordType: 'lab-result' });
 *   const bytes = await enc.decrypt(env, { sender, resultId, recordType: 'lab-result' });
 *
 * Two contexts, on purpose:
 *   - the data key context `kctx` = { service, purpose } goes to KMS. It is stable (so one data
 *     key can serve many records) and holds no PHI or record identifiers, because KMS writes the
 *     encryption context of every call into CloudTrail in clear.
 *   - the per-record context `ctx` (sender, record id, record type, ...) never goes to KMS; it is
 *     bound to the ciphertext as AES-GCM additional authenticated data and stored in the
 *     envelope. decrypt() first compares it with the context the caller expects, then GCM
 *     verifies it together with the ciphertext and header.
 *
 * Data keys: one GenerateDataKey serves up to `cache.maxUses` encryptions or `cache.maxAgeMs`,
 * whichever comes first (defaults in data-key-cache.ts: 10,000 uses, 5 minutes). Decrypted data
 * keys are cached by (kid, kctx, edk) for `decryptCache.maxAgeMs` with at most
 * `decryptCache.maxEntries` keys, so reading many records written by the same instance costs one
 * KMS Decrypt per data key. A key generated for encryption is also placed in the decrypt cache.
 *
 * The decrypt side (decrypt(), the decrypted key cache) is EnvelopeDecryptor (envelope-decryptor.ts),
 * which this class extends; a reader that only decrypts holds an EnvelopeDecryptor.
 *
 * Errors: EnvelopeDecryptError, KeyServiceUnavailableError, KeyServiceError (errors.ts);
 * TypeError for a caller bug (context values not strings, bad purpose).
 */

import { createCipheriv, randomBytes } from 'node:crypto';
import { GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { canonicalContext, copyContext } from './canonical-context';
import { DEFAULT_DATA_KEY_MAX_AGE_MS, DEFAULT_DATA_KEY_MAX_ENTRIES, DEFAULT_DATA_KEY_MAX_USES, DataKeyCache, type LoadedKey } from './data-key-cache';
import { ENVELOPE_CIPHER, EnvelopeDecryptor, decryptCacheId, takeKey, type DataKeyMeta } from './envelope-decryptor';
import {
  DATA_KEY_BYTES,
  DEFAULT_DATA_KEY_SERVICE,
  ENVELOPE_ALGORITHM,
  ENVELOPE_VERSION,
  IV_BYTES,
  TAG_BYTES,
  envelopeAad,
  type Envelope,
  type EnvelopeHeader,
} from './envelope-format';
import { KeyServiceError } from './errors';
import { mapKmsError } from './kms-errors';

export { EnvelopeDecryptor, type EnvelopeDecryptorOptions } from './envelope-decryptor';
export { DEFAULT_DATA_KEY_SERVICE } from './envelope-format';

export const DEFAULT_DATA_KEY_PURPOSE = 'record';

/** service / purpose go to KMS and CloudTrail: short machine labels only. */
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

export interface EnvelopeEncryptorOptions {
  /** the real KMS client (locally: endpoint pointed at lib/local/kms-server) */
  kms: KMSClient;
  /** KMS key id, key ARN, alias name (alias/...) or alias ARN used for GenerateDataKey */
  keyId: string;
  /** `service` entry of the data key context. Default 'interop'. */
  service?: string;
  /** default `purpose` entry of the data key context, e.g. the record type. Default 'record'. */
  purpose?: string;
  /** encrypt side data key reuse bounds */
  cache?: { maxAgeMs?: number; maxUses?: number; maxEntries?: number };
  /** decrypt side bounds; maxAgeMs defaults to cache.maxAgeMs */
  decryptCache?: { maxAgeMs?: number; maxEntries?: number };
  /** epoch ms clock for the cache bounds (tests); default Date.now() */
  clock?: () => number;
}

export interface EncryptOptions {
  /** overrides the encryptor's default purpose for this record */
  purpose?: string;
}

function checkLabel(name: string, value: string): string {
  if (typeof value !== 'string' || !LABEL.test(value)) {
    throw new TypeError(`${name} must be a short label matching ${LABEL.source}`);
  }
  return value;
}

/** A copy in its own allocation (Buffer.from would use the shared pool for small sizes). */
function copyKey(key: Buffer): Buffer {
  const copy = Buffer.alloc(key.length);
  key.copy(copy);
  return copy;
}

function toBytes(plaintext: Uint8Array | string): Uint8Array {
  if (typeof plaintext === 'string') return Buffer.from(plaintext, 'utf8');
  if (plaintext instanceof Uint8Array) return plaintext;
  throw new TypeError('plaintext must be a string, Buffer or Uint8Array');
}

/** Encrypts records (and, as an EnvelopeDecryptor, decrypts them; a key it generates is in its decrypt cache too). */
export class EnvelopeEncryptor extends EnvelopeDecryptor {
  private readonly keyId: string;
  private readonly service: string;
  private readonly purpose: string;
  private readonly encryptKeys: DataKeyCache<DataKeyMeta>;

  constructor(options: EnvelopeEncryptorOptions) {
    if (!options || !options.kms) throw new TypeError('EnvelopeEncryptor needs a KMS client');
    if (typeof options.keyId !== 'string' || options.keyId.length === 0) throw new TypeError('EnvelopeEncryptor needs a KMS keyId');
    super(options);
    this.keyId = options.keyId;
    this.service = checkLabel('service', options.service ?? DEFAULT_DATA_KEY_SERVICE);
    this.purpose = checkLabel('purpose', options.purpose ?? DEFAULT_DATA_KEY_PURPOSE);
    const maxAgeMs = options.cache?.maxAgeMs ?? DEFAULT_DATA_KEY_MAX_AGE_MS;
    this.encryptKeys = new DataKeyCache<DataKeyMeta>({
      maxAgeMs,
      maxUses: options.cache?.maxUses ?? DEFAULT_DATA_KEY_MAX_USES,
      maxEntries: options.cache?.maxEntries ?? DEFAULT_DATA_KEY_MAX_ENTRIES,
      clock: options.clock,
    });
  }

  /** Encrypts `plaintext` (a string is taken as UTF-8) and binds `context` to it. */
  async encrypt(plaintext: Uint8Array | string, context: Record<string, string>, options: EncryptOptions = {}): Promise<Envelope> {
    const bytes = toBytes(plaintext);
    const ctx = copyContext(context);
    const kctx = copyContext({ service: this.service, purpose: checkLabel('purpose', options.purpose ?? this.purpose) });

    return this.encryptKeys.acquire(
      canonicalContext(kctx),
      () => this.generateDataKey(kctx),
      (key, meta) => {
        const header: EnvelopeHeader = { v: ENVELOPE_VERSION, alg: ENVELOPE_ALGORITHM, kid: meta.kid, edk: meta.edk, kctx, ctx };
        const iv = randomBytes(IV_BYTES);
        const cipher = createCipheriv(ENVELOPE_CIPHER, key, iv, { authTagLength: TAG_BYTES });
        cipher.setAAD(envelopeAad(header));
        const ct = Buffer.concat([cipher.update(bytes), cipher.final()]);
        const tag = cipher.getAuthTag();
        return {
          v: header.v,
          alg: header.alg,
          kid: header.kid,
          edk: header.edk,
          kctx,
          iv: iv.toString('base64'),
          tag: tag.toString('base64'),
          ct: ct.toString('base64'),
          ctx,
        };
      },
    );
  }

  /** Drops and zeroes every cached data key (e.g. on shutdown, or after a key rotation). */
  override clearCache(): void {
    this.encryptKeys.clear();
    super.clearCache();
  }

  private async generateDataKey(kctx: Record<string, string>): Promise<LoadedKey<DataKeyMeta>> {
    let out;
    try {
      out = await this.kms.send(new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: kctx }));
    } catch (err) {
      throw mapKmsError('GenerateDataKey', err);
    }
    const { Plaintext, CiphertextBlob, KeyId } = out;
    if (!Plaintext || Plaintext.length !== DATA_KEY_BYTES || !CiphertextBlob || CiphertextBlob.length === 0 || !KeyId) {
      Plaintext?.fill(0);
      throw new KeyServiceError('GenerateDataKey', 'InvalidResponse');
    }
    const key = takeKey(Plaintext);
    const meta: DataKeyMeta = { kid: KeyId, edk: Buffer.from(CiphertextBlob).toString('base64') };
    // read-your-writes: records this instance encrypts can be decrypted without a KMS call
    this.decryptKeys.put(decryptCacheId(meta.kid, kctx, meta.edk), copyKey(key), meta);
    return { key, meta };
  }
}
