/**
 * The KMS half of the forms wiring: the packet cipher and the match index keys, both built on the
 * forms envelope encryptor. Imported only by the functions whose `needs` list KMS
 * (receiveFormIntakeScope, getInboxPacket, matchFormPackets) and by the full wiring in
 * dependencies.ts. The encryptor is kept per KMS client and key id, so its data key cache
 * survives across invocations.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import { kmsClient } from '../aws/clients';
import { requireEnv } from '../aws/environment';
import { Env } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { tableName } from '../dynamo/table-names';
import { MatchKeys } from './match-keys';
import { PACKET_PURPOSE, PacketCipher } from './packet-crypto';
import { formsStore } from './table-dependencies';

const encryptors = new WeakMap<KMSClient, Map<string, EnvelopeEncryptor>>();

export function formsEncryptor(kms: KMSClient = kmsClient(), keyId: string = requireEnv(Env.kmsKeyId)): EnvelopeEncryptor {
  let byKey = encryptors.get(kms);
  if (!byKey) encryptors.set(kms, (byKey = new Map()));
  let encryptor = byKey.get(keyId);
  if (!encryptor) byKey.set(keyId, (encryptor = new EnvelopeEncryptor({ kms, keyId, purpose: PACKET_PURPOSE })));
  return encryptor;
}

/** Seals and opens packet contents (KMS GenerateDataKey / Decrypt). */
export function packetCipher(): PacketCipher {
  return new PacketCipher(formsEncryptor());
}

/** The match index HMAC key, cached per container by DynamoDB endpoint and table (KMS Decrypt; GenerateDataKey on creation). */
export function matchKeys(): MatchKeys {
  return new MatchKeys(formsStore(), formsEncryptor(), `${process.env.AWS_ENDPOINT_URL_DYNAMODB ?? ''}|${tableName('forms')}`);
}
