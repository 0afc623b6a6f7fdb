/**
 * The KMS half of the forms wiring: the packet cipher and the match index keys, both built on the
 * forms envelope encryptor. Imported only by the functions whose `needs` list KMS
 * (receiveFormIntakeScope, getInboxPacket, matchFormPackets) and by the full wiring in
 * forms-wiring.ts. The encryptor is kept per KMS client and key id, so its data key cache
 * survives across invocations.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import { kmsClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { requireEnv } from '../aws/environment';
import { Env } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { tableName } from '../dynamo/table-names';
import { MatchKeys } from './match-keys';
import { PACKET_PURPOSE, PacketCipher } from './packet-crypto';
import { packetIntakeWriter } from './table-wiring';

const encryptors = new ContainerCache<EnvelopeEncryptor>();

/** The forms envelope encryptor (purpose form-packet), kept per container for its data key cache. */
export function formsEncryptor(kms: KMSClient = kmsClient(), keyId: string = requireEnv(Env.kmsKeyId)): EnvelopeEncryptor {
  return encryptors.get([kms, keyId], () => new EnvelopeEncryptor({ kms, keyId, purpose: PACKET_PURPOSE }));
}

/** Seals and opens packet contents (KMS GenerateDataKey / Decrypt). */
export function packetCipher(): PacketCipher {
  return new PacketCipher(formsEncryptor());
}

/** The match index HMAC key, cached per container by DynamoDB endpoint and table (KMS Decrypt; GenerateDataKey on creation). */
export function matchKeys(): MatchKeys {
  return new MatchKeys(packetIntakeWriter(), formsEncryptor(), `${process.env.AWS_ENDPOINT_URL_DYNAMODB ?? ''}|${tableName('forms')}`);
}
