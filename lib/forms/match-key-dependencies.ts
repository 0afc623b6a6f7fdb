/**
 * The match index HMAC key alone, for a function that only reads it (the inbox chart search): an
 * encryptor whose purpose is the match key's, so the bundle holds no packet-cipher code and IAM
 * grants it KMS Decrypt for purpose `match-index-key` only (kms-dependencies.ts wires both halves
 * for the functions that also seal or open packets).
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import { kmsClient } from '../aws/clients';
import { requireEnv } from '../aws/environment';
import { Env } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { tableName } from '../dynamo/table-names';
import { MATCH_KEY_PURPOSE, MatchKeys } from './match-keys';
import { formsStore } from './table-dependencies';

/** Per KMS client (a new client after lib/aws/clients is reset gets its own), so the data key cache survives invocations. */
const encryptors = new WeakMap<KMSClient, EnvelopeEncryptor>();

/** The match index keys, reading (KMS Decrypt) the key that exists; never creates one. */
export function matchKeysForLookup(): MatchKeys {
  const kms = kmsClient();
  let encryptor = encryptors.get(kms);
  if (!encryptor) encryptors.set(kms, (encryptor = new EnvelopeEncryptor({ kms, keyId: requireEnv(Env.kmsKeyId), purpose: MATCH_KEY_PURPOSE })));
  return new MatchKeys(formsStore(), encryptor, `${process.env.AWS_ENDPOINT_URL_DYNAMODB ?? ''}|${tableName('forms')}`);
}
