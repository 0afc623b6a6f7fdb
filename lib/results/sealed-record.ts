/**
 * The compact form of the results table's ciphertext (issue 31 item 2: fewer write units per lab
 * result). The plaintext is compressed (deflateRaw) and then envelope-encrypted exactly as before
 * (lib/crypto/envelope.ts: same data keys, same AAD); only the stored form changes: a DynamoDB
 * binary (B) attribute instead of the envelope's JSON with base64 fields, and without the fields
 * the reader knows already:
 *
 *   offset 0     1 byte    format (0x01: deflateRaw plaintext, lib/crypto envelope v1 AES-256-GCM)
 *   then         2 bytes   n = length of kid (big endian), n bytes kid (UTF-8, the KMS key ARN)
 *   then         2 bytes   m = length of kctx, m bytes kctx (canonical JSON of the data key context;
 *                          m = 0: the implied context the reader passes, lab results' { purpose, service })
 *   then         2 bytes   e = length of edk, e bytes edk (the KMS CiphertextBlob)
 *   then        12 bytes   iv
 *   then        16 bytes   tag
 *   then         rest      ciphertext
 *
 * The per-record context (`ctx`: record type, sender, result id, version id) is not stored: the
 * reader names the context it expects, as it always did, and it is bound as AES-GCM AAD, so an
 * item read under another record's context fails authentication exactly as a stored `ctx` that
 * did not match would have.
 *
 * Compression before encryption: the sizes of these items are visible to no one outside the
 * service (no attacker-chosen text is compressed together with a secret it could probe by size),
 * and the envelope still authenticates the compressed bytes.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ENVELOPE_ALGORITHM, ENVELOPE_VERSION, IV_BYTES, TAG_BYTES, type Envelope } from '../crypto/envelope-format';
import { canonicalContext } from '../crypto/canonical-context';
import { EnvelopeDecryptError } from '../crypto/errors';
import type { EnvelopeEncryptor } from '../crypto/envelope';
import type { EnvelopeDecryptor } from '../crypto/envelope-decryptor';

export const SEALED_FORMAT_DEFLATE = 0x01;
/** Size of an AWS KMS CiphertextBlob for a symmetric key's 32-byte data key (the local KMS's is smaller). */
export const AWS_KMS_DATA_KEY_BLOB_BYTES = 184;
/** Largest plaintext inflated from a sealed record (a version item is < 400 KB; S3 parts are not sealed records). */
const MAX_INFLATED_BYTES = 8 * 1024 * 1024;

function field(bytes: Buffer): Buffer {
  if (bytes.length > 0xffff) throw new RangeError('sealed record field too long');
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}

/**
 * Compresses `plaintext`, encrypts it under `context`, returns the compact bytes. The data key
 * context is left out when it is `impliedKeyContext` (the reader passes the same to openRecord).
 */
export async function sealRecord(
  encryptor: EnvelopeEncryptor,
  plaintext: string | Buffer,
  context: Record<string, string>,
  impliedKeyContext?: Record<string, string>,
): Promise<Buffer> {
  const compressed = deflateRawSync(typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext);
  const envelope = await encryptor.encrypt(compressed, context);
  const kctx = canonicalContext(envelope.kctx);
  const implied = impliedKeyContext !== undefined && canonicalContext(impliedKeyContext) === kctx;
  return Buffer.concat([
    Buffer.from([SEALED_FORMAT_DEFLATE]),
    field(Buffer.from(envelope.kid, 'utf8')),
    field(implied ? Buffer.alloc(0) : Buffer.from(kctx, 'utf8')),
    field(Buffer.from(envelope.edk, 'base64')),
    Buffer.from(envelope.iv, 'base64'),
    Buffer.from(envelope.tag, 'base64'),
    Buffer.from(envelope.ct, 'base64'),
  ]);
}

interface SealedParts {
  kid: string;
  kctx: Record<string, string>;
  edk: Buffer;
  iv: Buffer;
  tag: Buffer;
  ct: Buffer;
}

const malformed = (what: string) => new EnvelopeDecryptError('malformed', `malformed sealed record: ${what}`);

function parseSealed(bytes: Uint8Array, impliedKeyContext?: Record<string, string>): SealedParts {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < 1) throw malformed('empty');
  if (buffer[0] !== SEALED_FORMAT_DEFLATE) throw new EnvelopeDecryptError('unsupported-version', 'unsupported sealed record format');
  let at = 1;
  const take = (what: string): Buffer => {
    if (at + 2 > buffer.length) throw malformed(what);
    const length = buffer.readUInt16BE(at);
    if (at + 2 + length > buffer.length) throw malformed(what);
    const out = buffer.subarray(at + 2, at + 2 + length);
    at += 2 + length;
    return out;
  };
  const kid = take('kid').toString('utf8');
  let kctx: Record<string, string>;
  const kctxBytes = take('kctx');
  if (kctxBytes.length === 0) {
    if (!impliedKeyContext) throw malformed('kctx');
    kctx = { ...impliedKeyContext };
  } else {
    try {
      kctx = JSON.parse(kctxBytes.toString('utf8')) as Record<string, string>;
    } catch {
      throw malformed('kctx');
    }
  }
  const edk = take('edk');
  if (kid.length === 0 || edk.length === 0 || typeof kctx !== 'object' || kctx === null || Array.isArray(kctx)) throw malformed('header');
  if (at + IV_BYTES + TAG_BYTES > buffer.length) throw malformed('iv/tag');
  const iv = buffer.subarray(at, at + IV_BYTES);
  const tag = buffer.subarray(at + IV_BYTES, at + IV_BYTES + TAG_BYTES);
  const ct = buffer.subarray(at + IV_BYTES + TAG_BYTES);
  return { kid, kctx, edk, iv, tag, ct };
}

/** Decrypts and inflates a sealed record read under `context` (the context it was sealed under, or authentication fails). */
export async function openRecord(
  decryptor: EnvelopeDecryptor,
  bytes: Uint8Array,
  context: Record<string, string>,
  impliedKeyContext?: Record<string, string>,
): Promise<Buffer> {
  const parts = parseSealed(bytes, impliedKeyContext);
  const envelope: Envelope = {
    v: ENVELOPE_VERSION,
    alg: ENVELOPE_ALGORITHM,
    kid: parts.kid,
    edk: parts.edk.toString('base64'),
    kctx: parts.kctx,
    iv: parts.iv.toString('base64'),
    tag: parts.tag.toString('base64'),
    ct: parts.ct.toString('base64'),
    ctx: context,
  };
  const compressed = await decryptor.decrypt(envelope, context);
  try {
    return inflateRawSync(compressed, { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (cause) {
    throw new EnvelopeDecryptError('malformed', 'malformed sealed record: compressed payload', { cause });
  }
}

/**
 * How many bytes larger this sealed record would be with an AWS KMS data key blob (184 bytes)
 * than with the one it holds (the local KMS's is 98): for sizing items as DynamoDB would price
 * them in AWS. 0 for bytes that are not a sealed record or already hold a blob that large.
 */
export function awsDataKeyPaddingBytes(bytes: Uint8Array): number {
  try {
    return Math.max(0, AWS_KMS_DATA_KEY_BLOB_BYTES - parseSealed(bytes, {}).edk.length);
  } catch {
    return 0;
  }
}
