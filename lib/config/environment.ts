/**
 * Environment variable names, identical in the cloud (set by CDK) and locally (set by lib/local).
 * Part of the service facts (lib/config/service.ts re-exports it). Side-effect free at module
 * level, so esbuild leaves out of a Lambda bundle whatever it does not use.
 *
 * A string enum rather than an object: esbuild inlines `Env.chartTable` as "CHART_TABLE" where it
 * is read, so a bundle carries the names it reads, not all 40 (at run time it is the same object
 * of names as before: no reverse mapping for string members).
 */

export enum Env {
  stage = 'STAGE',
  chartTable = 'CHART_TABLE',
  keysTable = 'KEYS_TABLE',
  rateLimitTable = 'RATE_LIMIT_TABLE',
  resultsTable = 'RESULTS_TABLE',
  idempotencyTable = 'IDEMPOTENCY_TABLE',
  formsTable = 'FORMS_TABLE',
  auditTable = 'AUDIT_TABLE',
  kmsKeyId = 'KMS_KEY_ID',
  matchingQueueUrl = 'MATCHING_QUEUE_URL',
  notificationsQueueUrl = 'NOTIFICATIONS_QUEUE_URL',
  webhooksTable = 'WEBHOOKS_TABLE',
  webhookDeliveriesQueueUrl = 'WEBHOOK_DELIVERIES_QUEUE_URL',
  /** webhook retry delays are the schedule's (30 s, 2 min, 10 min, 1 h, 6 h ...) times this factor; tests shrink it */
  webhookRetryScale = 'WEBHOOK_RETRY_SCALE',
  /** webhook request timeout (ms), default 5000 */
  webhookTimeoutMs = 'WEBHOOK_TIMEOUT_MS',
  documentsBucket = 'DOCUMENTS_BUCKET',
  hl7SendingApplication = 'HL7_SENDING_APPLICATION',
  hl7SendingFacility = 'HL7_SENDING_FACILITY',
  /** EI-2 / XCN-9 / CX-4 namespace of the ids the HL7 exports write (default INTEROP) */
  hl7IdentifierNamespace = 'HL7_IDENTIFIER_NAMESPACE',
  /** MSH-11 processing ids POST /receiveHl7 files (comma-separated among P, T, D; default P): T and D get AR 202 otherwise */
  hl7AcceptProcessingIds = 'HL7_ACCEPT_PROCESSING_IDS',
  /** CX-4 assigning authority of the chart's own MRNs (owned by the chart, never by a partner); local DEMO-HOSP */
  chartAssigningAuthority = 'CHART_ASSIGNING_AUTHORITY',
  anonRateLimit = 'ANON_RATE_LIMIT',
  anonRateWindowSeconds = 'ANON_RATE_WINDOW_SECONDS',
  logLevel = 'LOG_LEVEL',
  /** distinct patients one partner's disclosures may reach in a UTC hour before the warning line the alarm counts (default 500) */
  patientReadsAlarmThreshold = 'PATIENT_READS_ALARM_THRESHOLD',
  /** value of the API Gateway key of the anonymous usage plan (cloud only; identifies, grants nothing) */
  anonUsageIdentifier = 'ANON_USAGE_IDENTIFIER',
  /** staff sign-in (OpenID Connect): issuer, the inbox page's client id (ID token audience), JWKS */
  staffIssuer = 'STAFF_ISSUER',
  staffClientId = 'STAFF_CLIENT_ID',
  staffJwksUri = 'STAFF_JWKS_URI',
  /** staff sign-in endpoints the inbox page uses (authorization code + PKCE) */
  staffAuthorizeUrl = 'STAFF_AUTHORIZE_URL',
  staffTokenUrl = 'STAFF_TOKEN_URL',
  staffLogoutUrl = 'STAFF_LOGOUT_URL',
  /** scopes the page asks for (Cognito: `openid profile`, whose ID token carries cognito:groups) */
  staffScopes = 'STAFF_SCOPES',
}

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
export type EnvName = Env;
