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
} as const;
export type Scope = (typeof Scopes)[keyof typeof Scopes];
export const ALL_SCOPES: readonly Scope[] = Object.values(Scopes);

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
  documentsBucket: 'DOCUMENTS_BUCKET',
  hl7SendingApplication: 'HL7_SENDING_APPLICATION',
  hl7SendingFacility: 'HL7_SENDING_FACILITY',
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

export type TableId = 'chart' | 'keys' | 'rateLimit' | 'results' | 'idempotency' | 'forms' | 'audit';

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
  },
};

export type QueueId = 'matching' | 'notifications';
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
};

export type Access = 'read' | 'write' | 'readwrite';

/** What a function touches; infra grants exactly this, nothing more. */
export interface ResourceNeeds {
  tables?: Partial<Record<TableId, Access>>;
  queues?: Partial<Record<QueueId, 'send' | 'consume'>>;
  kms?: Array<'GenerateDataKey' | 'Decrypt' | 'Encrypt'>;
  documentsBucket?: Access;
}

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

const exportNeeds: ResourceNeeds = { tables: { chart: 'read', audit: 'write' } };

/** The endpoint list. A new endpoint is one file in functions/ and one line here. */
export const HttpEndpoints: HttpEndpoint[] = [
  { kind: 'http', name: 'exportHl7PatientAdt', method: 'GET', path: '/exportHl7PatientAdt', scope: Scopes.exportHl7, needs: exportNeeds, memoryMb: 512, timeoutSeconds: 10 },
  {
    kind: 'http',
    name: 'exportHl7PatientSummary',
    method: 'GET',
    path: '/exportHl7PatientSummary',
    scope: Scopes.exportHl7,
    needs: { tables: { chart: 'read', results: 'read', audit: 'write' }, kms: ['Decrypt'] },
    memoryMb: 1024,
    timeoutSeconds: 15,
  },
  { kind: 'http', name: 'exportHl7Encounter', method: 'GET', path: '/exportHl7Encounter', scope: Scopes.exportHl7, needs: exportNeeds, memoryMb: 512, timeoutSeconds: 10 },
  { kind: 'http', name: 'exportHl7Note', method: 'GET', path: '/exportHl7Note', scope: Scopes.exportHl7, needs: exportNeeds, memoryMb: 512, timeoutSeconds: 10 },
  { kind: 'http', name: 'exportHl7Assessment', method: 'GET', path: '/exportHl7Assessment', scope: Scopes.exportHl7, needs: exportNeeds, memoryMb: 512, timeoutSeconds: 10 },
  {
    kind: 'http',
    name: 'receiveTestData',
    method: 'POST',
    path: '/receiveTestData',
    scope: Scopes.ingestResults,
    needs: {
      tables: { chart: 'read', results: 'readwrite', idempotency: 'readwrite', keys: 'read', audit: 'write' },
      queues: { notifications: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      documentsBucket: 'readwrite',
    },
    memoryMb: 1024,
    timeoutSeconds: 29,
  },
  {
    kind: 'http',
    name: 'receiveFormIntakeScope',
    method: 'POST',
    path: '/receiveFormIntakeScope',
    scope: Scopes.ingestForms,
    needs: { tables: { chart: 'read', forms: 'readwrite', audit: 'write' }, queues: { matching: 'send' }, kms: ['GenerateDataKey'] },
    memoryMb: 512,
    timeoutSeconds: 15,
  },
  { kind: 'http', name: 'listInteropInbox', method: 'GET', path: '/interopInbox', scope: Scopes.inboxRead, needs: { tables: { forms: 'read', audit: 'write' } }, memoryMb: 512, timeoutSeconds: 10 },
  {
    kind: 'http',
    name: 'getInboxPacket',
    method: 'GET',
    path: '/interopInbox/{packetId}',
    scope: Scopes.inboxRead,
    needs: { tables: { forms: 'read', audit: 'write' }, kms: ['Decrypt'] },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  {
    kind: 'http',
    name: 'routeInboxPacket',
    method: 'POST',
    path: '/interopInbox/{packetId}/route',
    scope: Scopes.inboxReview,
    needs: { tables: { chart: 'read', forms: 'readwrite', audit: 'write' } },
    memoryMb: 512,
    timeoutSeconds: 10,
  },  {
    kind: 'http',
    name: 'getInboxCandidates',
    method: 'GET',
    path: '/interopInbox/{packetId}/candidates',
    scope: Scopes.inboxRead,
    needs: { tables: { chart: 'read', forms: 'read', audit: 'write' } },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  { kind: 'http', name: 'serveInboxPage', method: 'GET', path: '/inbox', scope: Scopes.inboxRead, anonymous: true, staffSignIn: true, needs: {}, memoryMb: 256, timeoutSeconds: 5 },
];

/** The authorizer runs in front of every HTTP endpoint. */
export const AuthorizerFunction = {
  name: 'authorizer',
  needs: { tables: { keys: 'read', rateLimit: 'readwrite' } } as ResourceNeeds,
  memoryMb: 256,
  timeoutSeconds: 5,
};

export const BackgroundFunctions: BackgroundFunction[] = [
  {
    kind: 'queue',
    name: 'matchFormPackets',
    queue: 'matching',
    needs: { tables: { chart: 'read', forms: 'readwrite', audit: 'write' }, queues: { matching: 'consume' }, kms: ['Decrypt'] },
    memoryMb: 512,
    timeoutSeconds: 30,
  },
  {
    kind: 'schedule',
    name: 'sweepPendingPackets',
    schedule: 'rate(5 minutes)',
    needs: { tables: { forms: 'readwrite' }, queues: { matching: 'send' } },
    memoryMb: 256,
    timeoutSeconds: 60,
  },
  {
    kind: 'schedule',
    name: 'retryResultNotifications',
    schedule: 'rate(5 minutes)',
    needs: { tables: { results: 'readwrite' }, queues: { notifications: 'send' } },
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
