/**
 * The forms domain's collaborators, built from the environment the stack (cloud or local) sets.
 * Clients come from lib/aws/clients.ts (one per container); the envelope encryptor is kept per
 * KMS client so its data key cache survives across invocations. Each getter reads only the
 * variables it needs, so a function that never queues does not need MATCHING_QUEUE_URL.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { dynamoDbClient, kmsClient, sqsClient } from '../aws/clients';
import { requireEnv } from '../aws/environment';
import { Env } from '../config/service';
import { ChartStore } from '../chart/chart-store';
import type { Patient } from '../chart/types';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { tableName } from '../dynamo/table-names';
import { MatchKeys } from './match-keys';
import { MatchingQueue } from './matching-queue';
import { PACKET_PURPOSE, PacketCipher } from './packet-crypto';
import { FormsStore } from './packet-store';

export interface PatientDirectory {
  getPatient(patientId: string): Promise<Patient | undefined>;
}

export interface FormsDeps {
  store(): FormsStore;
  patients(): PatientDirectory;
  cipher(): PacketCipher;
  keys(): MatchKeys;
  queue(): MatchingQueue;
}

const encryptors = new WeakMap<KMSClient, Map<string, EnvelopeEncryptor>>();

export function formsEncryptor(kms: KMSClient = kmsClient(), keyId: string = requireEnv(Env.kmsKeyId)): EnvelopeEncryptor {
  let byKey = encryptors.get(kms);
  if (!byKey) encryptors.set(kms, (byKey = new Map()));
  let encryptor = byKey.get(keyId);
  if (!encryptor) byKey.set(keyId, (encryptor = new EnvelopeEncryptor({ kms, keyId, purpose: PACKET_PURPOSE })));
  return encryptor;
}

/** The deployed wiring: every call builds cheap wrappers around the per-container clients. */
export function formsDependencies(): FormsDeps {
  return {
    store: () => new FormsStore(dynamoDbClient(), tableName('forms')),
    patients: () => new ChartStore(dynamoDbClient(), tableName('chart')),
    cipher: () => new PacketCipher(formsEncryptor()),
    keys: () => new MatchKeys(new FormsStore(dynamoDbClient(), tableName('forms')), formsEncryptor(), `${process.env.AWS_ENDPOINT_URL_DYNAMODB ?? ''}|${tableName('forms')}`),
    queue: () => new MatchingQueue(sqsClient(), requireEnv(Env.matchingQueueUrl)),
  };
}

export interface ExplicitFormsConfig {
  db: DynamoDBClient;
  kms: KMSClient;
  kmsKeyId: string;
  formsTable: string;
  chartTable: string;
  /** only needed by callers that queue packets */
  sqs?: SQSClient;
  matchingQueueUrl?: string;
}

/** The same wiring from explicit clients and names (CLIs, the local stack, tests). */
export function explicitFormsDependencies(config: ExplicitFormsConfig): FormsDeps {
  const store = () => new FormsStore(config.db, config.formsTable);
  return {
    store,
    patients: () => new ChartStore(config.db, config.chartTable),
    cipher: () => new PacketCipher(formsEncryptor(config.kms, config.kmsKeyId)),
    keys: () => new MatchKeys(store(), formsEncryptor(config.kms, config.kmsKeyId), `explicit|${config.formsTable}`),
    queue: () => {
      if (!config.sqs || !config.matchingQueueUrl) throw new Error('explicitFormsDependencies: sqs and matchingQueueUrl are needed to queue packets');
      return new MatchingQueue(config.sqs, config.matchingQueueUrl);
    },
  };
}
