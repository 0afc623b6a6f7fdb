/**
 * What a function may touch (tables and operations, queues, KMS purposes, the documents bucket): infra grants exactly this.
 * Part of the service facts (lib/config/service.ts re-exports it). Side-effect free at module
 * level (no calls but those marked pure, no spreads), so esbuild leaves out of a Lambda bundle whatever it does not use.
 */

import type { QueueId } from './queues';
import type { TableId } from './tables';

export type Access = 'read' | 'write' | 'readwrite';

/** The DynamoDB operations (SDK v3 commands) a function may send; each is the IAM action `dynamodb:<op>`. */
export const DynamoOperations = ['GetItem', 'BatchGetItem', 'Query', 'Scan', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'] as const;
export type DynamoOperation = (typeof DynamoOperations)[number];
/**
 * One use of a table: an operation on the table itself, or `Query:<index>` for a Query with
 * `IndexName` (granted on that index's ARN only). infra/least-privilege.test.ts checks every
 * function's list against the operations its esbuild bundle contains.
 */
export type TableOperation = DynamoOperation | `Query:${string}`;

/**
 * The `purpose` entry of the KMS encryption context of every direct KMS call (lib/crypto's data
 * key context, the lookup-key wrapping). IAM limits each function's direct KMS use to the
 * purposes its `needs.kmsPurposes` lists (condition kms:EncryptionContext:purpose), so e.g. the
 * inbox cannot decrypt lab results. The infra test checks each bundle against its list.
 */
export const KmsPurposes = {
  labResult: 'lab-result',
  resultsLookupHmac: 'results-lookup-hmac',
  formPacket: 'form-packet',
  matchIndexKey: 'match-index-key',
  webhookSecret: 'webhook-secret',
} as const;
export type KmsPurpose = (typeof KmsPurposes)[keyof typeof KmsPurposes];

/** What a function touches; infra grants exactly this, nothing more. */
export interface ResourceNeeds {
  /** per table, exactly the operations the function's code sends (see TableOperation) */
  tables?: Partial<Record<TableId, TableOperation[]>>;
  queues?: Partial<Record<QueueId, 'send' | 'consume'>>;
  kms?: Array<'GenerateDataKey' | 'Decrypt' | 'Encrypt'>;
  /** required with `kms`: the encryption-context purposes those calls use */
  kmsPurposes?: KmsPurpose[];
  documentsBucket?: Access;
  /**
   * API Gateway API keys of partner keys (lib/admin/gateway-keys.ts): `delete` finds a key by name
   * (GetApiKeys: `apigateway:GET` on /apikeys) and deletes it (`apigateway:DELETE` on /apikeys/*).
   * Never usage plans, never creating keys.
   */
  apiGatewayKeys?: 'delete';
}
