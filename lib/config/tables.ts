/**
 * Every DynamoDB table with its key schema and indexes.
 * Part of the service facts (lib/config/service.ts re-exports it). Side-effect free at module
 * level (no calls but those marked pure, no spreads), so esbuild leaves out of a Lambda bundle whatever it does not use.
 */

import { Env, type EnvName } from './environment';

export type TableId = 'chart' | 'keys' | 'rateLimit' | 'results' | 'idempotency' | 'forms' | 'audit' | 'webhooks';

export interface IndexDefinition {
  name: string;
  kind: 'local' | 'global';
  partitionKey?: string; // global only
  sortKey: string;
  /**
   * The attributes (besides the table's and the index's keys) the index carries: INCLUDE
   * projection. Absent: ALL (every attribute). DynamoDB bills a Query by the size of the index
   * entries it reads, so an index read for a listing carries only what the listing returns.
   */
  include?: readonly string[];
  /**
   * The index that replaces this one (a projection cannot change in place): kept for one release,
   * read only by functions that query the replacement, while it backfills; the next release removes
   * it (README, "Releases that move an index").
   */
  retiring?: string;
}

/** The attributes the forms state index byStateSummary carries (forms-state-summary.ts). */
export { FORMS_STATE_SUMMARY_ATTRIBUTES } from './forms-state-summary';
import { FORMS_STATE_SUMMARY_ATTRIBUTES } from './forms-state-summary';

export interface TableDefinition {
  id: TableId;
  /** logical base name; the deployed/local physical name is `${prefix}-${baseName}` */
  baseName: string;
  env: EnvName;
  partitionKey: string;
  sortKey?: string;
  /** attribute holding the expiry (epoch seconds) when the table has TTL */
  ttlAttribute?: string;
  indexes: IndexDefinition[];
  /**
   * Append-only (the audit trail): functions may only `PutItem` (the code always writes with
   * `attribute_not_exists`); synthesis fails if a function declares Update/Delete/BatchWrite on it.
   */
  appendOnly?: boolean;
}

/** Every table's key schema. All key attributes are strings. */
export const Tables: Record<TableId, TableDefinition> = {
  chart: {
    id: 'chart',
    baseName: 'chart',
    env: Env.chartTable,
    partitionKey: 'pk', // PATIENT#<patientId>
    sortKey: 'sk', // PATIENT | ENCOUNTER#<id> | NOTE#<id> | ASSESSMENT#<id>
    // a patient's records across kinds, newest first: timeline = <UTC instant>#<kind>#<id>;
    // the patient item's timeline is `PATIENT`, which sorts after every instant (first in a newest-first Query)
    indexes: [{ name: 'byTimeline', kind: 'local', sortKey: 'timeline' }],
  },
  keys: {
    id: 'keys',
    baseName: 'api-keys',
    env: Env.keysTable,
    partitionKey: 'pk', // KEY#<sha256 hex> | PARTNER#<partnerId>
    indexes: [],
  },
  rateLimit: {
    id: 'rateLimit',
    baseName: 'rate-limits',
    env: Env.rateLimitTable,
    partitionKey: 'pk', // <subject>#<window start epoch s>
    ttlAttribute: 'expiresAt',
    indexes: [],
  },
  results: {
    id: 'results',
    baseName: 'lab-results',
    env: Env.resultsTable,
    partitionKey: 'pk',
    sortKey: 'sk',
    indexes: [{ name: 'byPatient', kind: 'global', partitionKey: 'patientPk', sortKey: 'patientSk' }],
  },
  idempotency: {
    id: 'idempotency',
    baseName: 'idempotency',
    env: Env.idempotencyTable,
    partitionKey: 'pk',
    ttlAttribute: 'expiresAt',
    indexes: [],
  },
  forms: {
    id: 'forms',
    baseName: 'form-packets',
    env: Env.formsTable,
    partitionKey: 'pk',
    sortKey: 'sk',
    indexes: [
      // retiring: whole packets (envelope and history) in every entry; read only while byStateSummary backfills
      { name: 'byState', kind: 'global', partitionKey: 'statePk', sortKey: 'stateSk', retiring: 'byStateSummary' },
      // what the inbox listing and the sweeper read (lib/forms/packet-items.ts SUMMARY_ATTRIBUTES adds the index's sort key)
      {
        name: 'byStateSummary',
        kind: 'global',
        partitionKey: 'statePk',
        sortKey: 'stateSk',
        include: FORMS_STATE_SUMMARY_ATTRIBUTES,
      },
    ],
  },
  audit: {
    id: 'audit',
    baseName: 'audit',
    env: Env.auditTable,
    partitionKey: 'pk',
    sortKey: 'sk',
    indexes: [],
    appendOnly: true,
  },
  webhooks: {
    id: 'webhooks',
    baseName: 'webhooks',
    env: Env.webhooksTable,
    partitionKey: 'pk', // SUB#<subscriptionId> | DELIVERY#<deliveryId>
    sortKey: 'sk', // SUB | DELIVERY | ATTEMPT#<nnnn>
    // delivery log items expire after 30 days; subscriptions never
    ttlAttribute: 'expiresAt',
    // listPk SUBSCRIPTIONS (listSk <partnerId>#<subId>) | SUB#<subId>#DELIVERIES (listSk <createdAt>#<deliveryId>)
    indexes: [{ name: 'byList', kind: 'global', partitionKey: 'listPk', sortKey: 'listSk' }],
  },
};

/** Physical resource names: `${prefix}-${baseName}`; prefix is `interop-<stage>` in the cloud and locally. */
export function resourceName(prefix: string, baseName: string): string {
  return `${prefix}-${baseName}`;
}
