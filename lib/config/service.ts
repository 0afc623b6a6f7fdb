/**
 * One place for the facts the deployed stack, the local stack and the tests share: the endpoint
 * list, the environment variable names, the tables with their key schemas, the queues.
 * Nothing here touches AWS; `infra/` and `lib/local/` both read it, so they cannot drift.
 */

export const Scopes = {
  exportHl7: 'interop:export:hl7',
  ingestResults: 'interop:ingest:results',
  ingestForms: 'interop:ingest:forms',
  /** read the interop inbox and the charts of a packet's candidates (staff; implied by inboxReview) */
  inboxRead: 'interop:inbox:read',
  inboxReview: 'interop:inbox:review',
  ingestHl7: 'interop:ingest:hl7',
  exportFhir: 'interop:export:fhir',
  /** FHIR R4 intake: DiagnosticReport (lab results), QuestionnaireResponse (forms), transaction/batch Bundles */
  ingestFhir: 'interop:ingest:fhir',
} as const;
export type Scope = (typeof Scopes)[keyof typeof Scopes];
export const ALL_SCOPES: readonly Scope[] = Object.values(Scopes);
/**
 * Scopes for the clinic's own staff only: the inbox shows every partner's packets decrypted. Keys
 * holding one are issued only to `internal` partners (`npm run keys` refuses otherwise) and the
 * access decision refuses them for any other partner (403), even if a record was written by hand.
 */
export const STAFF_ONLY_SCOPES: readonly Scope[] = [Scopes.inboxRead, Scopes.inboxReview];

/** Environment variable names, identical in the cloud (set by CDK) and locally (set by lib/local). */
export const Env = {
  stage: 'STAGE',
  chartTable: 'CHART_TABLE',
  keysTable: 'KEYS_TABLE',
  rateLimitTable: 'RATE_LIMIT_TABLE',
  resultsTable: 'RESULTS_TABLE',
  idempotencyTable: 'IDEMPOTENCY_TABLE',
  formsTable: 'FORMS_TABLE',
  auditTable: 'AUDIT_TABLE',
  kmsKeyId: 'KMS_KEY_ID',
  matchingQueueUrl: 'MATCHING_QUEUE_URL',
  notificationsQueueUrl: 'NOTIFICATIONS_QUEUE_URL',
  webhooksTable: 'WEBHOOKS_TABLE',
  webhookDeliveriesQueueUrl: 'WEBHOOK_DELIVERIES_QUEUE_URL',
  /** webhook retry delays are the schedule's (30 s, 2 min, 10 min, 1 h, 6 h ...) times this factor; tests shrink it */
  webhookRetryScale: 'WEBHOOK_RETRY_SCALE',
  /** webhook request timeout (ms), default 5000 */
  webhookTimeoutMs: 'WEBHOOK_TIMEOUT_MS',
  documentsBucket: 'DOCUMENTS_BUCKET',
  hl7SendingApplication: 'HL7_SENDING_APPLICATION',
  hl7SendingFacility: 'HL7_SENDING_FACILITY',
  /** EI-2 / XCN-9 / CX-4 namespace of the ids the HL7 exports write (default INTEROP) */
  hl7IdentifierNamespace: 'HL7_IDENTIFIER_NAMESPACE',
  /** MSH-11 processing ids POST /receiveHl7 files (comma-separated among P, T, D; default P): T and D get AR 202 otherwise */
  hl7AcceptProcessingIds: 'HL7_ACCEPT_PROCESSING_IDS',
  /** CX-4 assigning authority of the chart's own MRNs (owned by the chart, never by a partner); local DEMO-HOSP */
  chartAssigningAuthority: 'CHART_ASSIGNING_AUTHORITY',
  anonRateLimit: 'ANON_RATE_LIMIT',
  anonRateWindowSeconds: 'ANON_RATE_WINDOW_SECONDS',
  logLevel: 'LOG_LEVEL',
  /** value of the API Gateway key of the anonymous usage plan (cloud only; identifies, grants nothing) */
  anonUsageIdentifier: 'ANON_USAGE_IDENTIFIER',
  /** staff sign-in (OpenID Connect): issuer, the inbox page's client id (ID token audience), JWKS */
  staffIssuer: 'STAFF_ISSUER',
  staffClientId: 'STAFF_CLIENT_ID',
  staffJwksUri: 'STAFF_JWKS_URI',
  /** staff sign-in endpoints the inbox page uses (authorization code + PKCE) */
  staffAuthorizeUrl: 'STAFF_AUTHORIZE_URL',
  staffTokenUrl: 'STAFF_TOKEN_URL',
  staffLogoutUrl: 'STAFF_LOGOUT_URL',
  /** scopes the page asks for (Cognito: `openid profile`, whose ID token carries cognito:groups) */
  staffScopes: 'STAFF_SCOPES',
} as const;

/** The staff sign-in settings, set together (cloud: the Cognito user pool; local: the OpenID provider). */
export const STAFF_SIGN_IN_ENV: readonly EnvName[] = [
  Env.staffIssuer,
  Env.staffClientId,
  Env.staffJwksUri,
  Env.staffAuthorizeUrl,
  Env.staffTokenUrl,
  Env.staffLogoutUrl,
  Env.staffScopes,
];
export type EnvName = (typeof Env)[keyof typeof Env];

export type TableId = 'chart' | 'keys' | 'rateLimit' | 'results' | 'idempotency' | 'forms' | 'audit' | 'webhooks';

export interface IndexDefinition {
  name: string;
  kind: 'local' | 'global';
  partitionKey?: string; // global only
  sortKey: string;
}

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
    indexes: [{ name: 'byState', kind: 'global', partitionKey: 'statePk', sortKey: 'stateSk' }],
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

export type QueueId = 'matching' | 'notifications' | 'webhookDeliveries';
export interface QueueDefinition {
  id: QueueId;
  baseName: string;
  env: EnvName;
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
}
export const Queues: Record<QueueId, QueueDefinition> = {
  matching: { id: 'matching', baseName: 'form-matching', env: Env.matchingQueueUrl, visibilityTimeoutSeconds: 180, maxReceiveCount: 5 },
  notifications: { id: 'notifications', baseName: 'result-notifications', env: Env.notificationsQueueUrl, visibilityTimeoutSeconds: 60, maxReceiveCount: 5 },
  // one message per webhook delivery; each failed attempt hides the message for its backoff delay
  // (ChangeMessageVisibility), so maxReceiveCount = the attempts of the retry schedule (8): the receive
  // after the last failed attempt moves the message to the DLQ (alarmed). lib/webhooks/retry-schedule.ts
  webhookDeliveries: {
    id: 'webhookDeliveries',
    baseName: 'webhook-deliveries',
    env: Env.webhookDeliveriesQueueUrl,
    visibilityTimeoutSeconds: 60,
    maxReceiveCount: 8,
  },
};

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

/**
 * A file a function reads at run time, copied beside its bundle when the stack is synthesized
 * (infra/service-function.ts) and read from the repository by the local stack and the tests
 * (lib/openapi/published-files.ts). `source` is relative to the repository root.
 */
export interface BundledFile {
  /** file name in the function's package (`$LAMBDA_TASK_ROOT/<name>`) */
  name: string;
  source: string;
}

/** The files of the published API reference (GET /openapi.json, GET /docs). */
export const BundledFiles = {
  openApiDocument: { name: 'openapi.json', source: 'docs/openapi.json' },
  redocBundle: { name: 'redoc.standalone.js', source: 'node_modules/redoc/bundles/redoc.standalone.js' },
} as const satisfies Record<string, BundledFile>;

export interface HttpEndpoint {
  kind: 'http';
  /** function name and file: functions/<name>.ts exporting `handler` */
  name: string;
  method: 'GET' | 'POST';
  /** API Gateway resource path, `{param}` for path parameters */
  path: string;
  scope: Scope;
  /**
   * Served without a key or token (the staff page's static files): the authorizer counts the
   * request against the anonymous limit of the caller's address and never checks `scope`.
   */
  anonymous?: true;
  /** reads the staff sign-in settings (Env.staff*; the authorizer always does) */
  staffSignIn?: true;
  needs: ResourceNeeds;
  memoryMb: number;
  timeoutSeconds: number;
  /** `fhir`: success and errors are FHIR R4 JSON (OperationOutcome); default: problem+json errors */
  format?: 'fhir';
  /** files the function reads at run time, shipped beside its bundle */
  bundledFiles?: BundledFile[];
}

export interface BackgroundFunction {
  kind: 'queue' | 'schedule';
  name: string;
  queue?: QueueId;
  /** rate expression for scheduled functions */
  schedule?: string;
  needs: ResourceNeeds;
  memoryMb: number;
  timeoutSeconds: number;
}

/** The audit record every HTTP function appends (lib/http/middleware/audit-recording.ts). */
const AUDIT: TableOperation[] = ['PutItem'];
/** chart reads by id: patient (GetItem), or patient + record (+ encounter) in one BatchGetItem */
const exportNeeds: ResourceNeeds = { tables: { chart: ['GetItem', 'BatchGetItem'], audit: AUDIT } };
/** one chart item by id (ChartStore.getPatient / getRecord) */
const chartGetNeeds: ResourceNeeds = { tables: { chart: ['GetItem'], audit: AUDIT } };
/** FHIR searches of a patient's records of one kind (ChartStore.recordsOfKind: Query on the table) */
const chartSearchNeeds: ResourceNeeds = { tables: { chart: ['Query'], audit: AUDIT } };
const labKms: Pick<ResourceNeeds, 'kms' | 'kmsPurposes'> = { kms: ['Decrypt'], kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac] };
/** FHIR reads that include lab results (decrypted summaries: results table + KMS Decrypt) */
const fhirLabNeeds: ResourceNeeds = {
  // one lab result by id: its versions (Query on the table), the lookup keys item (GetItem)
  tables: { chart: ['GetItem'], results: ['GetItem', 'Query'], audit: AUDIT },
  ...labKms,
};
/** a patient's lab results page (ResultStore.resultsForPatientPage: Query on byPatient) */
const fhirLabSearchNeeds: ResourceNeeds = { tables: { chart: ['GetItem'], results: ['GetItem', 'Query:byPatient'], audit: AUDIT }, ...labKms };
/** the lab result writer (receiveTestData, receiveHl7, routeHeldRecord): versions, ledger, lookup keys */
const RESULT_WRITES: TableOperation[] = ['GetItem', 'Query', 'PutItem', 'UpdateItem'];
const fhir = (name: string, path: string, needs: ResourceNeeds, extra: Partial<HttpEndpoint> = {}): HttpEndpoint => ({
  kind: 'http',
  name,
  method: 'GET',
  path,
  scope: Scopes.exportFhir,
  needs,
  memoryMb: 512,
  timeoutSeconds: 10,
  format: 'fhir',
  ...extra,
});

/**
 * FHIR intake (receiveFhir*): the lab result writer of receiveHl7 (patient resolution: chart patients, MRN
 * index, partner identities, held records; keys: the owner of an assigning authority), the form intake of
 * receiveFormIntakeScope (packets, match key, matching queue) and the idempotency table (Bundle answers).
 */
const fhirIntakeNeeds: ResourceNeeds = {
  tables: {
    chart: ['GetItem', 'PutItem'],
    results: RESULT_WRITES,
    idempotency: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    forms: ['GetItem', 'PutItem', 'UpdateItem'],
    keys: ['GetItem'],
    audit: AUDIT,
  },
  queues: { notifications: 'send', matching: 'send' },
  kms: ['GenerateDataKey', 'Decrypt'],
  kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac, KmsPurposes.formPacket, KmsPurposes.matchIndexKey],
  documentsBucket: 'readwrite',
};
const fhirIntake: Partial<HttpEndpoint> = { method: 'POST', scope: Scopes.ingestFhir, memoryMb: 1024, timeoutSeconds: 29 };

/** The endpoint list. A new endpoint is one file in functions/ and one line here. */
export const HttpEndpoints: HttpEndpoint[] = [
  {
    kind: 'http',
    name: 'exportHl7PatientAdt',
    method: 'GET',
    path: '/exportHl7PatientAdt',
    scope: Scopes.exportHl7,
    needs: chartGetNeeds,
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'exportHl7PatientSummary',
    method: 'GET',
    path: '/exportHl7PatientSummary',
    scope: Scopes.exportHl7,
    needs: {
      // the summary: timeline (Query on byTimeline; the patient by GetItem on a continuation page), lab results of the patient (Query on byPatient), lookup keys
      tables: { chart: ['GetItem', 'Query:byTimeline'], results: ['GetItem', 'Query:byPatient'], audit: AUDIT },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
    },
    memoryMb: 1024,
    timeoutSeconds: 15,
  },
  {
    kind: 'http',
    name: 'exportHl7Encounter',
    method: 'GET',
    path: '/exportHl7Encounter',
    scope: Scopes.exportHl7,
    needs: exportNeeds,
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'exportHl7Note',
    method: 'GET',
    path: '/exportHl7Note',
    scope: Scopes.exportHl7,
    needs: exportNeeds,
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'exportHl7Assessment',
    method: 'GET',
    path: '/exportHl7Assessment',
    scope: Scopes.exportHl7,
    needs: exportNeeds,
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'receiveTestData',
    method: 'POST',
    path: '/receiveTestData',
    scope: Scopes.ingestResults,
    needs: {
      // no keys table: the partner comes from the authorizer's context
      tables: { chart: ['GetItem'], results: RESULT_WRITES, idempotency: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'], audit: AUDIT },
      queues: { notifications: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
      documentsBucket: 'readwrite',
    },
    memoryMb: 1024,
    timeoutSeconds: 29,
  },
  {
    kind: 'http',
    name: 'exportHl7LabResult',
    method: 'GET',
    path: '/exportHl7LabResult',
    scope: Scopes.exportHl7,
    needs: {
      tables: { chart: ['GetItem'], results: ['GetItem', 'Query'], audit: AUDIT },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
      documentsBucket: 'read',
    },
    memoryMb: 1024,
    timeoutSeconds: 15,
  },
  {
    kind: 'http',
    name: 'receiveFormIntakeScope',
    method: 'POST',
    path: '/receiveFormIntakeScope',
    scope: Scopes.ingestForms,
    needs: {
      // packet, match key envelope (created on first use: Put, then Update)
      tables: { chart: ['GetItem'], forms: ['GetItem', 'PutItem', 'UpdateItem'], audit: AUDIT },
      queues: { matching: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      kmsPurposes: [KmsPurposes.formPacket, KmsPurposes.matchIndexKey],
    },
    memoryMb: 512,
    timeoutSeconds: 15,
  },
  {
    kind: 'http',
    name: 'receiveHl7',
    method: 'POST',
    path: '/receiveHl7',
    scope: Scopes.ingestHl7,
    needs: {
      // chart: patients, notes (+ versions), held records, partner identities, MRN index, merge reviews;
      // keys: the chart assigning authority's owner
      tables: {
        chart: ['GetItem', 'PutItem', 'UpdateItem'],
        results: RESULT_WRITES,
        idempotency: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
        keys: ['GetItem'],
        audit: AUDIT,
      },
      queues: { notifications: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac, KmsPurposes.matchIndexKey, KmsPurposes.formPacket],
      documentsBucket: 'readwrite',
    },
    memoryMb: 1024,
    timeoutSeconds: 29,
  },
  {
    kind: 'http',
    name: 'listInteropInbox',
    method: 'GET',
    path: '/interopInbox',
    scope: Scopes.inboxRead,
    needs: { tables: { forms: ['Query:byState'], audit: AUDIT } },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  // records HL7 intake held for review (docs/write-authority.md): static `held` beside {packetId}
  {
    kind: 'http',
    name: 'listHeldRecords',
    method: 'GET',
    path: '/interopInbox/held',
    scope: Scopes.inboxRead,
    needs: { tables: { chart: ['Query'], audit: AUDIT } },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'getHeldRecord',
    method: 'GET',
    path: '/interopInbox/held/{heldId}',
    scope: Scopes.inboxRead,
    needs: { tables: { chart: ['GetItem'], audit: AUDIT } },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'routeHeldRecord',
    method: 'POST',
    path: '/interopInbox/held/{heldId}/route',
    scope: Scopes.inboxReview,
    // a document -> a chart note (only if absent), an identity -> its staff link, lab results -> a new
    // version for the chart patient (the result writer of receiveTestData, without its idempotency table)
    needs: {
      tables: { chart: ['GetItem', 'PutItem', 'UpdateItem'], results: RESULT_WRITES, audit: AUDIT },
      queues: { notifications: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
      documentsBucket: 'readwrite',
    },
    memoryMb: 1024,
    timeoutSeconds: 29,
  },
  {
    kind: 'http',
    name: 'searchHeldPatients',
    method: 'POST',
    path: '/interopInbox/held/{heldId}/patientSearch',
    // reviewers only, like the packet search (the match index lives in the forms table)
    scope: Scopes.inboxReview,
    needs: { tables: { chart: ['GetItem'], forms: ['GetItem', 'Query'], audit: AUDIT }, kms: ['Decrypt'], kmsPurposes: [KmsPurposes.matchIndexKey] },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'getInboxPacket',
    method: 'GET',
    path: '/interopInbox/{packetId}',
    scope: Scopes.inboxRead,
    needs: { tables: { chart: ['GetItem'], forms: ['GetItem'], audit: AUDIT }, kms: ['Decrypt'], kmsPurposes: [KmsPurposes.formPacket] },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'routeInboxPacket',
    method: 'POST',
    path: '/interopInbox/{packetId}/route',
    scope: Scopes.inboxReview,
    needs: { tables: { chart: ['GetItem'], forms: ['GetItem', 'PutItem', 'UpdateItem'], audit: AUDIT } },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'searchInboxPatients',
    method: 'POST',
    path: '/interopInbox/{packetId}/patientSearch',
    // reviewers only: the search shows chart demographics beyond the packet's own candidates
    scope: Scopes.inboxReview,
    needs: { tables: { chart: ['GetItem'], forms: ['GetItem', 'Query'], audit: AUDIT }, kms: ['Decrypt'], kmsPurposes: [KmsPurposes.matchIndexKey] },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'getInboxCandidates',
    method: 'GET',
    path: '/interopInbox/{packetId}/candidates',
    scope: Scopes.inboxRead,
    needs: { tables: { chart: ['GetItem'], forms: ['GetItem'], audit: AUDIT } },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'serveInboxPage',
    method: 'GET',
    path: '/inbox',
    scope: Scopes.inboxRead,
    anonymous: true,
    staffSignIn: true,
    needs: {},
    memoryMb: 256,
    timeoutSeconds: 5,
  },
  // the API reference, published with every stage (docs/openapi.json rendered by Redoc); the
  // scope is never checked (anonymous), only the anonymous rate limit applies
  {
    kind: 'http',
    name: 'serveOpenApiDocument',
    method: 'GET',
    path: '/openapi.json',
    scope: Scopes.exportHl7,
    anonymous: true,
    needs: {},
    memoryMb: 256,
    timeoutSeconds: 5,
    bundledFiles: [BundledFiles.openApiDocument],
  },
  {
    kind: 'http',
    name: 'serveApiReference',
    method: 'GET',
    path: '/docs',
    scope: Scopes.exportHl7,
    anonymous: true,
    needs: {},
    memoryMb: 512,
    timeoutSeconds: 5,
    bundledFiles: [BundledFiles.openApiDocument, BundledFiles.redocBundle],
  },
  // FHIR R4 read API (docs/fhir.md): ids carry their patient, `<patient>..<record>`
  fhir('fhirMetadata', '/fhir/metadata', {}, { anonymous: true, memoryMb: 256 }),
  fhir('fhirPatientRead', '/fhir/Patient/{id}', chartGetNeeds),
  // by MRN: the chart's MRN index (GetItem), keyed by the results table's lookup key (GetItem, unwrapped with KMS, never created)
  fhir('fhirPatientSearch', '/fhir/Patient', {
    tables: { chart: ['GetItem'], results: ['GetItem'], audit: AUDIT },
    kms: ['Decrypt'],
    kmsPurposes: [KmsPurposes.resultsLookupHmac],
  }),
  fhir(
    'fhirPatientEverything',
    '/fhir/Patient/{id}/$everything',
    { tables: { chart: ['GetItem', 'Query:byTimeline'], results: ['GetItem', 'Query:byPatient'], audit: AUDIT }, ...labKms },
    { memoryMb: 1024, timeoutSeconds: 15 },
  ),
  fhir('fhirEncounterRead', '/fhir/Encounter/{id}', chartGetNeeds),
  fhir('fhirEncounterSearch', '/fhir/Encounter', chartSearchNeeds),
  fhir('fhirDocumentReferenceRead', '/fhir/DocumentReference/{id}', chartGetNeeds),
  fhir('fhirDocumentReferenceSearch', '/fhir/DocumentReference', chartSearchNeeds),
  // assessments and lab Observations (`<patient>..<result>..<n>`)
  fhir('fhirObservationRead', '/fhir/Observation/{id}', fhirLabNeeds),
  fhir(
    'fhirObservationSearch',
    '/fhir/Observation',
    { tables: { chart: ['GetItem', 'Query'], results: ['GetItem', 'Query:byPatient'], audit: AUDIT }, ...labKms },
    { timeoutSeconds: 15 },
  ),
  fhir('fhirDiagnosticReportRead', '/fhir/DiagnosticReport/{id}', fhirLabNeeds),
  fhir('fhirDiagnosticReportSearch', '/fhir/DiagnosticReport', fhirLabSearchNeeds, { timeoutSeconds: 15 }),
  // FHIR R4 intake (docs/fhir.md "Intake"): exact POST routes, so the greedy GET /fhir/{proxy+} never takes them.
  // Lab results through the HL7 ORU result writer (patient resolution, held records), forms through the
  // form intake (packets, match key, matching queue); the idempotency table keeps each Bundle's answer.
  fhir('receiveFhirBundle', '/fhir', fhirIntakeNeeds, fhirIntake),
  fhir('receiveFhirDiagnosticReport', '/fhir/DiagnosticReport', fhirIntakeNeeds, fhirIntake),
  fhir('receiveFhirQuestionnaireResponse', '/fhir/QuestionnaireResponse', fhirIntakeNeeds, fhirIntake),
  // every other path under /fhir: 404 OperationOutcome instead of the gateway's problem+json (reads nothing)
  fhir('fhirRouteNotFound', '/fhir/{proxy+}', {}, { memoryMb: 256 }),
];

/** The authorizer runs in front of every HTTP endpoint. */
export const AuthorizerFunction = {
  name: 'authorizer',
  needs: { tables: { keys: ['GetItem'], rateLimit: ['GetItem', 'BatchGetItem', 'UpdateItem'] } } as ResourceNeeds,
  memoryMb: 256,
  timeoutSeconds: 5,
};

export const BackgroundFunctions: BackgroundFunction[] = [
  {
    kind: 'queue',
    name: 'matchFormPackets',
    queue: 'matching',
    needs: {
      tables: { chart: ['GetItem'], forms: ['GetItem', 'Query', 'PutItem', 'UpdateItem'], audit: AUDIT },
      queues: { matching: 'consume' },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.formPacket, KmsPurposes.matchIndexKey],
    },
    memoryMb: 512,
    timeoutSeconds: 30,
  },
  {
    kind: 'schedule',
    name: 'sweepPendingPackets',
    schedule: 'rate(5 minutes)',
    needs: { tables: { forms: ['Query:byState', 'UpdateItem'] }, queues: { matching: 'send' } },
    memoryMb: 256,
    timeoutSeconds: 60,
  },
  {
    kind: 'queue',
    name: 'fanOutWebhookEvents',
    queue: 'notifications',
    needs: { tables: { webhooks: ['GetItem', 'PutItem', 'UpdateItem', 'Query:byList'] }, queues: { notifications: 'consume', webhookDeliveries: 'send' } },
    memoryMb: 256,
    timeoutSeconds: 30,
  },
  {
    kind: 'queue',
    name: 'deliverWebhooks',
    queue: 'webhookDeliveries',
    // ChangeMessageVisibility (the backoff) is part of consume
    needs: {
      tables: { webhooks: ['GetItem', 'PutItem', 'UpdateItem'] },
      queues: { webhookDeliveries: 'consume' },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.webhookSecret],
    },
    memoryMb: 512,
    timeoutSeconds: 30,
  },
  {
    kind: 'schedule',
    name: 'revokeExpiredKeys',
    // a rotated key is refused by the authorizer from its expiresAt on; this revokes it in the table
    // and deletes its API Gateway key (10,000 per account and region) within 15 minutes
    schedule: 'rate(15 minutes)',
    needs: { tables: { keys: ['Scan', 'UpdateItem'], audit: AUDIT }, apiGatewayKeys: 'delete' },
    memoryMb: 256,
    timeoutSeconds: 60,
  },
  {
    kind: 'schedule',
    name: 'retryResultNotifications',
    schedule: 'rate(5 minutes)',
    needs: { tables: { results: ['GetItem', 'UpdateItem', 'Query:byPatient'] }, queues: { notifications: 'send' } },
    memoryMb: 256,
    timeoutSeconds: 60,
  },
];

/** Physical resource names: `${prefix}-${baseName}`; prefix is `interop-<stage>` in the cloud and locally. */
export function resourceName(prefix: string, baseName: string): string {
  return `${prefix}-${baseName}`;
}

export function endpointByRoute(method: string, path: string): HttpEndpoint | undefined {
  return HttpEndpoints.find((e) => e.method === method && e.path === path);
}

/**
 * The methods the endpoint list defines on a path template (e.g. `/interopInbox/{packetId}`),
 * sorted: the `Allow` header of a 405 for any other method on that path, locally and in the cloud.
 */
export function allowedMethods(pathTemplate: string): string[] {
  return [...new Set(HttpEndpoints.filter((e) => e.path === pathTemplate).map((e) => e.method))].sort();
}
