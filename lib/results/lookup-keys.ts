/**
 * Keyed hashes for the plain lookup keys of the results table: result ids, version ids, the
 * patient key of the byPatient index, body fingerprints and idempotency keys are all
 * HMAC-SHA256 under one per-deployment secret, so nobody who can read the table (or a backup, or
 * a log) can confirm a guessed patient id, accession number or body by hashing it.
 *
 * The secret: 32 random bytes from KMS GenerateDataKey (data key context
 * { service: interop, purpose: results-lookup-hmac }), stored only in wrapped form in the results
 * table itself:
 *
 *   pk CONFIG#results-lookup-key   sk v1   wrappedKey (B, the KMS CiphertextBlob)   kid   createdAt
 *
 * created by the first writer with a conditional put (concurrent cold starts converge on one
 * key: the loser reads the winner's). Readers (the summary export) only read and unwrap it, so
 * they need results:read and kms:Decrypt, nothing else; when no result was ever written there is
 * no key and nothing to find. The unwrapped key is held in memory per container. The key is never
 * rotated (every id derived from it would change); the KMS key that wraps it may rotate freely.
 */
import { createHmac } from 'node:crypto';
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { mapKmsError } from '../crypto/kms-errors';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';

export const LOOKUP_KEY_ITEM = { pk: 'CONFIG#results-lookup-key', sk: 'v1' } as const;
export const LOOKUP_KEY_CONTEXT = { service: 'interop', purpose: 'results-lookup-hmac' } as const;
const KEY_BYTES = 32;
const DEPENDENCY = 'results-table';

/** The hash functions of the results table. Outputs are lowercase hex. */
export class ResultKeys {
  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new RangeError('lookup key must be 32 bytes');
  }

  private mac(label: string, parts: readonly string[]): string {
    const h = createHmac('sha256', this.key);
    // length-prefixed fields: no two different inputs share a byte string
    for (const part of [label, ...parts]) {
      const bytes = Buffer.from(part, 'utf8');
      const len = Buffer.alloc(4);
      len.writeUInt32BE(bytes.length);
      h.update(len);
      h.update(bytes);
    }
    return h.digest('hex');
  }

  /**
   * `lr_` + 128 bits: one result = one (senderID, accessionNumber, universal service code when sent).
   * One accession (a specimen) often carries several orders (OBR-4 panels, e.g. newborn screening): each
   * is its own result, never a version of another. Without a universal service, as before: (sender, accession).
   */
  resultId(senderId: string, accessionNumber: string, universalServiceCode?: string): string {
    const parts = universalServiceCode ? [senderId, accessionNumber, universalServiceCode] : [senderId, accessionNumber];
    return 'lr_' + this.mac('result', parts).slice(0, 32);
  }

  /** `lv_` + 128 bits: one version = one (result, status, instant, body). Byte-identical resends get the same id. */
  versionId(resultId: string, status: string, resultedAtKey: string, bodyFingerprint: string): string {
    return 'lv_' + this.mac('version', [resultId, status, resultedAtKey, bodyFingerprint]).slice(0, 32);
  }

  /** Partition key of the byPatient index for a patient id (matched or not). */
  patientKey(patientId: string): string {
    return 'PATIENT#' + this.mac('patient', [patientId]);
  }

  /**
   * Keyed hash of a patient identifier (assigning authority + MRN): the chart's MRN index key and the
   * stable id of a patient first seen in an HL7 message. Never reversible to the MRN.
   */
  patientIdentifierKey(assigningAuthority: string, mrn: string): string {
    return this.mac('patient-identifier', [assigningAuthority, mrn]);
  }

  /** Fingerprint of a body in canonical JSON. */
  bodyFingerprint(canonicalBody: string): string {
    return this.mac('body', [canonicalBody]);
  }

  /** Idempotency table key: scoped by partner, so two partners' request ids never collide. */
  idempotencyKey(endpoint: string, partnerId: string, requestId: string): string {
    return `${endpoint}#` + this.mac('idempotency', [endpoint, partnerId, requestId]);
  }
}

export interface LookupKeySource {
  db: DynamoDBClient;
  table: string;
  kms: KMSClient;
  /** KMS key for GenerateDataKey; required only when the key may be created */
  kmsKeyId?: string;
}

const cache = new Map<string, Promise<ResultKeys | undefined>>();

/**
 * The deployment's ResultKeys. With `create`, generates and stores the secret when there is none
 * yet; without, resolves undefined in that case. Failures are not cached.
 */
export function loadResultKeys(source: LookupKeySource, options: { create: boolean }): Promise<ResultKeys | undefined> {
  return options.create ? cachedResultKeys(source, true, loadOrCreate) : readResultKeys(source);
}

/**
 * The deployment's ResultKeys for a reader: read and unwrapped (GetItem, KMS Decrypt), never created
 * (undefined when no result was ever written). A reader's bundle carries no GenerateDataKey nor PutItem.
 */
export function readResultKeys(source: LookupKeySource): Promise<ResultKeys | undefined> {
  return cachedResultKeys(source, false, loadExisting);
}

function cachedResultKeys(
  source: LookupKeySource,
  create: boolean,
  load: (source: LookupKeySource) => Promise<ResultKeys | undefined>,
): Promise<ResultKeys | undefined> {
  const id = `${source.table}\u0000${create}`;
  const cached = cache.get(id);
  if (cached) return cached;
  const pending = load(source).then((keys) => {
    if (!keys) cache.delete(id); // may exist later
    return keys;
  });
  pending.catch(() => cache.delete(id));
  cache.set(id, pending);
  return pending;
}

/** Forgets cached keys (tests). */
export function clearResultKeysCache(): void {
  cache.clear();
}

async function loadExisting(source: LookupKeySource): Promise<ResultKeys | undefined> {
  const existing = await readWrapped(source);
  return existing ? new ResultKeys(await unwrap(source, existing)) : undefined;
}

async function loadOrCreate(source: LookupKeySource): Promise<ResultKeys | undefined> {
  const existing = await loadExisting(source);
  if (existing) return existing;
  if (!source.kmsKeyId) throw new Error('a KMS key id is needed to create the lookup key');
  let out;
  try {
    out = await source.kms.send(new GenerateDataKeyCommand({ KeyId: source.kmsKeyId, NumberOfBytes: KEY_BYTES, EncryptionContext: { ...LOOKUP_KEY_CONTEXT } }));
  } catch (error) {
    throw mapKmsError('GenerateDataKey', error);
  }
  if (!out.Plaintext || out.Plaintext.length !== KEY_BYTES || !out.CiphertextBlob || !out.KeyId) throw new Error('KMS returned an unusable data key');
  const key = Buffer.alloc(KEY_BYTES);
  key.set(out.Plaintext);
  out.Plaintext.fill(0);
  try {
    await awsCall(DEPENDENCY, () =>
      source.db.send(
        new PutItemCommand({
          TableName: source.table,
          Item: {
            pk: { S: LOOKUP_KEY_ITEM.pk },
            sk: { S: LOOKUP_KEY_ITEM.sk },
            kind: { S: 'config' },
            wrappedKey: { B: out.CiphertextBlob! },
            kid: { S: out.KeyId! },
            createdAt: { S: new Date().toISOString() },
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return new ResultKeys(key);
  } catch (error) {
    key.fill(0);
    if (!isConditionalCheckFailed(error)) throw error;
  }
  // another container created it first: use theirs
  const winner = await readWrapped(source);
  if (!winner) throw new Error('lookup key vanished after a conditional put conflict');
  return new ResultKeys(await unwrap(source, winner));
}

async function readWrapped(source: LookupKeySource): Promise<{ blob: Uint8Array; kid: string } | undefined> {
  const out = await awsCall(DEPENDENCY, () =>
    source.db.send(
      new GetItemCommand({ TableName: source.table, Key: { pk: { S: LOOKUP_KEY_ITEM.pk }, sk: { S: LOOKUP_KEY_ITEM.sk } }, ConsistentRead: true }),
    ),
  );
  const blob = out.Item?.wrappedKey?.B;
  const kid = out.Item?.kid?.S;
  return blob && kid ? { blob, kid } : undefined;
}

async function unwrap(source: LookupKeySource, wrapped: { blob: Uint8Array; kid: string }): Promise<Buffer> {
  let out;
  try {
    out = await source.kms.send(new DecryptCommand({ CiphertextBlob: wrapped.blob, KeyId: wrapped.kid, EncryptionContext: { ...LOOKUP_KEY_CONTEXT } }));
  } catch (error) {
    throw mapKmsError('Decrypt', error);
  }
  if (!out.Plaintext || out.Plaintext.length !== KEY_BYTES) throw new Error('KMS returned a lookup key of the wrong size');
  const key = Buffer.alloc(KEY_BYTES);
  key.set(out.Plaintext);
  out.Plaintext.fill(0);
  return key;
}
