/**
 * The forms domain's collaborators, built from the environment the stack (cloud or local) sets.
 * Clients come from lib/aws/clients.ts (one per container); the envelope encryptor is kept per
 * KMS client so its data key cache survives across invocations. Each getter reads only the
 * variables it needs, so a function that never queues does not need MATCHING_QUEUE_URL.
 *
 * The wiring is split by SDK client so a function bundles only the clients its `needs` list:
 *   forms-dependencies.ts  the parts' types (FormsDependencies); each operation takes a Pick of it
 *   table-wiring.ts        store, patients, audit (DynamoDB)
 *   kms-wiring.ts          cipher, keys (KMS)
 *   queue-wiring.ts        queue (SQS)
 * This module puts every part together (formsDependencies(): CLIs, the local stack, the match
 * index) and holds the explicit wiring (tests). Functions must not import it: it pulls every client.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ChartStore } from '../chart/chart-store';
import { AuditTrail } from '../audit/audit-trail';
import type { FormsDependencies } from './forms-dependencies';
import { formsEncryptor, matchKeys, packetCipher } from './kms-wiring';
import { MatchKeys } from './match-keys';
import { MatchingQueue } from './matching-queue';
import { PacketCipher } from './packet-crypto';
import { relationshipLookup } from '../relationships/relationship-wiring';
import { readRelationship } from '../relationships/relationships';
import { FormsStore } from './packet-store';
import { auditTrail, formsStore, patientDirectory } from './table-wiring';
import { matchingQueue } from './queue-wiring';

export { formsEncryptor } from './kms-wiring';

export type { FormsDependencies, PatientDirectory, RoutingAuditSink } from './forms-dependencies';

/** The deployed wiring with every part: every call builds cheap wrappers around the per-container clients. */
export function formsDependencies(): FormsDependencies {
  return {
    store: formsStore,
    patients: patientDirectory,
    cipher: packetCipher,
    keys: matchKeys,
    queue: matchingQueue,
    audit: auditTrail,
    relationships: relationshipLookup,
  };
}

export interface ExplicitFormsConfig {
  db: DynamoDBClient;
  kms: KMSClient;
  kmsKeyId: string;
  formsTable: string;
  chartTable: string;
  /** only needed by callers that route packets (the matcher's audit records) */
  auditTable?: string;
  /** only needed by callers that queue packets */
  sqs?: SQSClient;
  matchingQueueUrl?: string;
}

/** The same wiring from explicit clients and names (CLIs, the local stack, tests). */
export function explicitFormsDependencies(config: ExplicitFormsConfig): FormsDependencies {
  const store = () => new FormsStore(config.db, config.formsTable);
  const relationships = { db: config.db, table: config.chartTable };
  return {
    store,
    patients: () => new ChartStore(config.db, config.chartTable),
    relationships: (partnerId, patientId) => readRelationship(relationships, partnerId, patientId),
    cipher: () => new PacketCipher(formsEncryptor(config.kms, config.kmsKeyId)),
    keys: () => new MatchKeys(store(), formsEncryptor(config.kms, config.kmsKeyId), `explicit|${config.formsTable}`),
    audit: () => {
      if (!config.auditTable) throw new Error('explicitFormsDependencies: auditTable is needed to audit routings');
      return new AuditTrail(config.db, config.auditTable);
    },
    queue: () => {
      if (!config.sqs || !config.matchingQueueUrl) throw new Error('explicitFormsDependencies: sqs and matchingQueueUrl are needed to queue packets');
      return new MatchingQueue(config.sqs, config.matchingQueueUrl);
    },
  };
}
