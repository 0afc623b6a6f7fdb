/**
 * The match index HMAC key alone, for a function that only reads it (the inbox chart search): an
 * encryptor whose purpose is the match key's, so the bundle holds no packet-cipher code and IAM
 * grants it KMS Decrypt for purpose `match-index-key` only (kms-wiring.ts wires both halves
 * for the functions that also seal or open packets).
 */
import { kmsClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { requireEnv } from '../aws/environment';
import { Env } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { tableName } from '../dynamo/table-names';
import { MATCH_KEY_PURPOSE, MatchKeys } from './match-keys';
import { packetReader } from './table-wiring';

const encryptors = new ContainerCache<EnvelopeEncryptor>();

/** The match index keys, reading (KMS Decrypt) the key that exists; never creates one. */
export function matchKeysForLookup(): MatchKeys {
  const encryptor = encryptors.get(
    [kmsClient(), requireEnv(Env.kmsKeyId)],
    ([kms, keyId]) => new EnvelopeEncryptor({ kms, keyId, purpose: MATCH_KEY_PURPOSE }),
  );
  return new MatchKeys(packetReader(), encryptor, `${process.env.AWS_ENDPOINT_URL_DYNAMODB ?? ''}|${tableName('forms')}`);
}
