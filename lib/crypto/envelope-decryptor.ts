/**
 * The decrypt side of envelope encryption (envelope.ts): opens envelopes with KMS Decrypt and a
 * bounded cache of decrypted data keys. Readers of encrypted records (the FHIR lab reads, the
 * summary and lab result exports) hold an EnvelopeDecryptor, so their bundles carry no
 * GenerateDataKey, no encrypt path and no encrypt-side key cache; EnvelopeEncryptor extends it.
 *
 *   const dec = new EnvelopeDecryptor({ kms });
 *   const bytes = await dec.decrypt(env, { sender, resultId, recordType: 'lab-result' });
 *
 * Decrypted data keys are cached by (kid, kctx, edk) for `decryptCache.maxAgeMs` (default
 * `cache.maxAgeMs`, else 5 minutes) with at most `decryptCache.maxEntries` keys, so reading many
 * records written under one data key costs one KMS Decrypt.
 *
 * Errors: EnvelopeDecryptError, KeyServiceUnavailableError, KeyServiceError (errors.ts);
 * TypeError for a caller bug (context values not strings).
 */

import { createDecipheriv } from 'node:crypto';
import { DecryptCommand, type KMSClient } from '@aws-sdk/client-kms';
import { canonicalContext } from './canonical-context';
import { DEFAULT_DATA_KEY_MAX_AGE_MS, DEFAULT_DECRYPTED_KEY_MAX_ENTRIES, DataKeyCache, type LoadedKey } from './data-key-cache';
import { DATA_KEY_BYTES, TAG_BYTES, envelopeAad, parseEnvelope, type Envelope } from './envelope-format';
import { EnvelopeDecryptError } from './errors';
import { mapKmsError } from './kms-errors';

export const ENVELOPE_CIPHER = 'aes-256-gcm';

export interface EnvelopeDecryptorOptions {
  /** the real KMS client (locally: endpoint pointed at lib/local/kms-server) */
  kms: KMSClient;
  /** `maxAgeMs` is the default age bound of decrypted keys too */
  cache?: { maxAgeMs?: number };
  /** decrypt side bounds; maxAgeMs defaults to cache.maxAgeMs */
  decryptCache?: { maxAgeMs?: number; maxEntries?: number };
  /** epoch ms clock for the cache bounds (tests); default Date.now() */
  clock?: () => number;
}

export interface DataKeyMeta {
  /** key ARN as KMS returned it */
  kid: string;
  /** base64 CiphertextBlob */
  edk: string;
}

/** Copies a KMS plaintext into a buffer we own (not from the shared pool) and zeroes the SDK's copy. */
export function takeKey(plaintext: Uint8Array): Buffer {
  const key = Buffer.alloc(plaintext.length);
  key.set(plaintext);
  plaintext.fill(0);
  return key;
}

/** The decrypt cache's id of a data key. */
export function decryptCacheId(kid: string, kctx: Record<string, string>, edk: string): string {
  return JSON.stringify([kid, canonicalContext(kctx), edk]);
}

export class EnvelopeDecryptor {
  protected readonly kms: KMSClient;
  protected readonly decryptKeys: DataKeyCache<DataKeyMeta>;

  constructor(options: EnvelopeDecryptorOptions) {
    if (!options || !options.kms) throw new TypeError('EnvelopeDecryptor needs a KMS client');
    this.kms = options.kms;
    this.decryptKeys = new DataKeyCache<DataKeyMeta>({
      maxAgeMs: options.decryptCache?.maxAgeMs ?? options.cache?.maxAgeMs ?? DEFAULT_DATA_KEY_MAX_AGE_MS,
      maxUses: Infinity,
      maxEntries: options.decryptCache?.maxEntries ?? DEFAULT_DECRYPTED_KEY_MAX_ENTRIES,
      clock: options.clock,
    });
  }

  /**
   * Decrypts an envelope (object or serializeEnvelope string) after checking that its context
   * equals `expectedContext` (key order irrelevant). Throws EnvelopeDecryptError on any mismatch
   * or tampering.
   */
  async decrypt(envelope: Envelope | string, expectedContext: Record<string, string>): Promise<Buffer> {
    const expected = canonicalContext(expectedContext); // TypeError on a caller bug
    const parsed = parseEnvelope(envelope);
    const { kid, edk, kctx, ctx } = parsed.envelope;
    if (canonicalContext(ctx) !== expected) {
      throw new EnvelopeDecryptError('context-mismatch', 'envelope context does not match the expected context');
    }
    const aad = envelopeAad(parsed.envelope);

    return this.decryptKeys.acquire(
      decryptCacheId(kid, kctx, edk),
      () => this.decryptDataKey(kid, kctx, edk, parsed.edk),
      (key) => {
        try {
          const decipher = createDecipheriv(ENVELOPE_CIPHER, key, parsed.iv, { authTagLength: TAG_BYTES });
          decipher.setAAD(aad);
          decipher.setAuthTag(parsed.tag);
          return Buffer.concat([decipher.update(parsed.ct), decipher.final()]);
        } catch (cause) {
          throw new EnvelopeDecryptError('authentication-failed', 'envelope authentication failed', { cause });
        }
      },
    );
  }

  /** Drops and zeroes every cached data key (e.g. on shutdown, or after a key rotation). */
  clearCache(): void {
    this.decryptKeys.clear();
  }

  private async decryptDataKey(kid: string, kctx: Record<string, string>, edkBase64: string, edk: Buffer): Promise<LoadedKey<DataKeyMeta>> {
    let out;
    try {
      // KeyId pins the KMS key: KMS answers IncorrectKeyException if the edk is under another key
      out = await this.kms.send(new DecryptCommand({ CiphertextBlob: edk, EncryptionContext: kctx, KeyId: kid }));
    } catch (err) {
      throw mapKmsError('Decrypt', err);
    }
    const { Plaintext } = out;
    if (!Plaintext || Plaintext.length !== DATA_KEY_BYTES) {
      Plaintext?.fill(0);
      throw new EnvelopeDecryptError('data-key-rejected', 'KMS returned a data key of the wrong size');
    }
    return { key: takeKey(Plaintext), meta: { kid, edk: edkBase64 } };
  }
}
