/**
 * Envelope format, version 1. A JSON-serialisable object (store it as a DynamoDB map or as the
 * compact JSON string from serializeEnvelope):
 *
 *   {
 *     "v":    1,                         // format version
 *     "alg":  "AES-256-GCM",             // content cipher
 *     "kid":  "arn:aws:kms:...:key/..",  // KMS key that wrapped the data key (ARN as KMS returned it)
 *     "edk":  "<base64>",                // encrypted data key: the KMS CiphertextBlob
 *     "kctx": { "purpose": "lab-result", "service": "interop" },
 *                                        // KMS encryption context of the data key: stable, no PHI
 *                                        // (it is logged in CloudTrail), sorted keys
 *     "iv":   "<base64 12 bytes>",       // random 96-bit GCM nonce, fresh per message
 *     "tag":  "<base64 16 bytes>",       // GCM authentication tag
 *     "ct":   "<base64>",                // ciphertext
 *     "ctx":  { "recordType": "...", "resultId": "...", "sender": "..." }
 *                                        // per-record context, sorted keys; never sent to KMS
 *   }
 *
 * Binding: one data key (from one GenerateDataKey under `kctx`) protects many messages. Each
 * message's per-record context is bound by AES-GCM as additional authenticated data:
 *
 *   AAD = UTF-8( JSON.stringify(["interop-envelope", v, alg, kid, edk,
 *                                canonicalContext(kctx), canonicalContext(ctx)]) )
 *
 * so altering the ciphertext, iv, tag, the context, or any header field makes GCM authentication
 * fail. canonicalContext = JSON with sorted keys (canonical-context.ts). A JSON array of strings
 * is an unambiguous encoding, so no two different headers share an AAD.
 *
 * Nonce budget: random 96-bit IVs are safe up to 2^32 messages per key (NIST SP 800-38D); the
 * data key cache caps uses per key far below that (data-key-cache.ts).
 */

import { canonicalContext, copyContext } from './canonical-context';
import { EnvelopeDecryptError } from './errors';

export const ENVELOPE_VERSION = 1 as const;
export const ENVELOPE_ALGORITHM = 'AES-256-GCM' as const;
export const ENVELOPE_AAD_LABEL = 'interop-envelope';
export const DATA_KEY_BYTES = 32;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
/** `service` entry of the data key context (sent to KMS) unless an encryptor names another. */
export const DEFAULT_DATA_KEY_SERVICE = 'interop';
/** KMS CiphertextBlob limit. */
const MAX_EDK_BYTES = 6144;
const MAX_KID_CHARS = 2048;

export interface Envelope {
  v: typeof ENVELOPE_VERSION;
  alg: typeof ENVELOPE_ALGORITHM;
  kid: string;
  edk: string;
  kctx: Record<string, string>;
  iv: string;
  tag: string;
  ct: string;
  ctx: Record<string, string>;
}

/** Header fields bound into the AAD (everything except iv / tag / ct). */
export type EnvelopeHeader = Pick<Envelope, 'v' | 'alg' | 'kid' | 'edk' | 'kctx' | 'ctx'>;

export function envelopeAad(header: EnvelopeHeader): Buffer {
  return Buffer.from(
    JSON.stringify([ENVELOPE_AAD_LABEL, header.v, header.alg, header.kid, header.edk, canonicalContext(header.kctx), canonicalContext(header.ctx)]),
    'utf8',
  );
}

/** Compact JSON string with a fixed field order. */
export function serializeEnvelope(envelope: Envelope): string {
  const { v, alg, kid, edk, kctx, iv, tag, ct, ctx } = envelope;
  return JSON.stringify({ v, alg, kid, edk, kctx: copyContext(kctx), iv, tag, ct, ctx: copyContext(ctx) });
}

/**
 * Strict base64 decode (standard alphabet, padded, canonical); undefined when `value` is not
 * that. Node's decoder skips characters outside the alphabet, so a re-encode that differs from
 * the input means the input was not canonical base64. (No regex: linear on multi-MB strings.)
 */
export function decodeBase64Strict(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || value.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.toString('base64') === value ? bytes : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function malformed(what: string): EnvelopeDecryptError {
  return new EnvelopeDecryptError('malformed', `malformed envelope: ${what}`);
}

export interface ParsedEnvelope {
  envelope: Envelope;
  edk: Buffer;
  iv: Buffer;
  tag: Buffer;
  ct: Buffer;
}

/**
 * Validates an envelope (object or the string from serializeEnvelope) and decodes its binary
 * fields. Throws EnvelopeDecryptError ('malformed' | 'unsupported-version'); messages name the
 * offending field, never its value.
 */
export function parseEnvelope(input: unknown): ParsedEnvelope {
  let raw: unknown = input;
  if (typeof input === 'string') {
    try {
      raw = JSON.parse(input);
    } catch {
      throw malformed('not JSON');
    }
  }
  if (!isPlainObject(raw)) throw malformed('not an object');
  const o = raw;
  if (o.v !== ENVELOPE_VERSION) throw new EnvelopeDecryptError('unsupported-version', 'unsupported envelope version');
  if (o.alg !== ENVELOPE_ALGORITHM) throw new EnvelopeDecryptError('unsupported-version', 'unsupported envelope algorithm');
  if (typeof o.kid !== 'string' || o.kid.length === 0 || o.kid.length > MAX_KID_CHARS) throw malformed('kid');

  const edk = decodeBase64Strict(o.edk);
  if (!edk || edk.length === 0 || edk.length > MAX_EDK_BYTES) throw malformed('edk');
  const iv = decodeBase64Strict(o.iv);
  if (!iv || iv.length !== IV_BYTES) throw malformed('iv');
  const tag = decodeBase64Strict(o.tag);
  if (!tag || tag.length !== TAG_BYTES) throw malformed('tag');
  const ct = decodeBase64Strict(o.ct);
  if (!ct) throw malformed('ct');

  if (!isPlainObject(o.kctx)) throw malformed('kctx');
  if (!isPlainObject(o.ctx)) throw malformed('ctx');
  let kctx: Record<string, string>;
  let ctx: Record<string, string>;
  try {
    kctx = copyContext(o.kctx as Record<string, string>);
  } catch {
    throw malformed('kctx');
  }
  try {
    ctx = copyContext(o.ctx as Record<string, string>);
  } catch {
    throw malformed('ctx');
  }

  return {
    envelope: {
      v: ENVELOPE_VERSION,
      alg: ENVELOPE_ALGORITHM,
      kid: o.kid,
      edk: o.edk as string,
      kctx,
      iv: o.iv as string,
      tag: o.tag as string,
      ct: o.ct as string,
      ctx,
    },
    edk,
    iv,
    tag,
    ct,
  };
}
