/**
 * Deployment settings of one stage, read from CDK context (`-c key=value` or cdk.json) and the
 * CDK_DEFAULT_* environment. Everything about *what* the service is (functions, tables, queues,
 * environment variable names) comes from lib/config/service.ts; this file only holds the knobs
 * that differ per deployment (stage, account, region, limits, retention).
 */
import type { Node } from 'constructs';
import { DEFAULT_ANONYMOUS_LIMIT } from '../lib/keys/access-wiring';
import { DEFAULT_CHART_ASSIGNING_AUTHORITY } from '../lib/keys/chart-authority';
import { DEFAULT_PATIENT_READS_ALARM_THRESHOLD } from '../lib/disclosures/patient-read-volume';

export const DEFAULT_STAGE = 'dev';
/** Region used when neither `-c region=` nor CDK_DEFAULT_REGION is set (offline synth, CI). */
export const DEFAULT_REGION = 'us-east-1';

/** Partner tiers: one API Gateway usage plan each. Keys are attached to a plan by `npm run keys`. */
export interface UsagePlanTier {
  /** steady-state requests per second across all of a key's requests */
  rateLimit: number;
  burstLimit: number;
  /** requests per month; omitted = no quota */
  monthlyQuota?: number;
  description: string;
}

/**
 * The per-key sliding-window limit (keys table, enforced by the authorizer with x-ratelimit-* headers)
 * is the limit partners see. The usage-plan throttle sits above it as a coarse ceiling that keeps a
 * misbehaving client away from the functions even if its key's window is generous.
 */
export const PartnerTiers = {
  standard: { rateLimit: 25, burstLimit: 50, monthlyQuota: 2_000_000, description: 'Default partner tier' },
  high: { rateLimit: 100, burstLimit: 200, monthlyQuota: 10_000_000, description: 'High-volume partner tier' },
} as const satisfies Record<string, UsagePlanTier>;
export type PartnerTier = keyof typeof PartnerTiers;

/**
 * The anonymous plan: every request without a usable key is metered against one shared API key
 * (see ANON_USAGE_IDENTIFIER). Tight throttle, no quota: a flood of anonymous calls is answered
 * 429 by the gateway and never reaches a function, and it cannot lock partners out (they are on
 * their own plans).
 */
export const AnonymousTier: UsagePlanTier = { rateLimit: 10, burstLimit: 20, description: 'Requests without a valid API key (answered 401/403/429)' };

/**
 * The staff plan: every request the authorizer authenticated with a staff ID token (the inbox page,
 * `Authorization: Bearer`) is metered against one shared API key of its own (see
 * staffUsageIdentifier), so a flood of anonymous calls cannot lock staff out of the inbox, and staff
 * do not count against a partner tier. Each staff member's own limit (STAFF_RATE_LIMIT in
 * lib/keys/staff-access.ts, 600 a minute) stays in the authorizer; this throttle is the ceiling of
 * all staff together. `-c staffRateLimit` / `-c staffBurstLimit` change it.
 */
export const StaffTier: UsagePlanTier = { rateLimit: 50, burstLimit: 100, description: 'Signed-in clinic staff (inbox page, staff ID token)' };

/** API Gateway security policy of the REST API: TLS 1.3 and 1.2 only (TLS 1.0/1.1 refused). */
export const API_SECURITY_POLICY = 'SecurityPolicy_TLS13_1_2_2021_06';
/** security policies that accept nothing older than TLS 1.2 (what the tests allow on every entry point) */
export const TLS12_OR_LATER_POLICIES = [
  'TLS_1_2',
  'SecurityPolicy_TLS13_1_2_2021_06',
  'SecurityPolicy_TLS13_1_2_PQ_2025_09',
  'SecurityPolicy_TLS13_1_2_PFS_PQ_2025_09',
  'SecurityPolicy_TLS13_1_2_FIPS_PQ_2025_09',
  'SecurityPolicy_TLS13_1_2_FIPS_PFS_PQ_2025_09',
  'SecurityPolicy_TLS13_1_3_2025_09',
  'SecurityPolicy_TLS13_1_3_FIPS_2025_09',
];

export interface StageConfig {
  stage: string;
  /** physical name prefix, `interop-<stage>` (same as the local stack's) */
  prefix: string;
  account?: string;
  region: string;
  /** dev: resources are destroyed with the stack; every other stage retains data and protects tables */
  retainData: boolean;
  logRetentionDays: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  hl7SendingApplication: string;
  hl7SendingFacility: string;
  /** EI-2 / XCN-9 / CX-4 of the ids in the HL7 exports (README, "Identifiers") */
  hl7IdentifierNamespace: string;
  /** CX-4 of the chart's own MRNs: owned by the chart, never by a partner (docs/write-authority.md) */
  chartAssigningAuthority: string;
  /** MSH-11 processing ids HL7 intake files (comma list); default P: training and debugging messages are refused */
  hl7AcceptProcessingIds: string;
  anonRateLimit: number;
  anonRateWindowSeconds: number;
  /** stage-wide throttle, above every usage plan */
  stageRateLimit: number;
  stageBurstLimit: number;
  /** WAF rate-based rule: requests per source IP per 5 minutes */
  wafRequestsPerIpPer5Min: number;
  /** e-mail subscribed to the alarm topic (required in practice outside dev: synth warns without it) */
  alarmEmail?: string;
  /** WAF blocked requests in 5 minutes above which the waf-blocked alarm fires */
  wafBlockedAlarmThreshold: number;
  /** API p99 latency (ms) above which, for 15 minutes, the api-latency-p99 alarm fires */
  apiLatencyP99AlarmMs: number;
  /** API 4XX responses above this % of at least `apiAlarmMinRequests` requests in 5 minutes: the api-4xx-rate alarm */
  api4xxAlarmRatePercent: number;
  /** API 429 responses (every throttle and quota) above this % of at least `apiAlarmMinRequests` requests in 5 minutes: the api-429-rate alarm */
  api429AlarmRatePercent: number;
  /** the least requests in 5 minutes for the 4XX and 429 rate alarms to judge */
  apiAlarmMinRequests: number;
  /** distinct patients one partner's exports and FHIR reads may reach in a UTC hour; above it the patient-reads alarm fires (docs/disclosures.md) */
  patientReadsAlarmThreshold: number;
  /** KMS cryptographic requests per second of the account and region above which the kms-request-rate alarm fires (80 % of the lowest regional quota, 5,500/s) */
  kmsRequestsPerSecondAlarm: number;
  /**
   * Reserve concurrency for background functions (queue worker 5, each schedule 1). Off by default
   * in dev: a new account's Lambda quota (10) cannot spare it; on by default elsewhere.
   */
  reservedConcurrency: boolean;
  /**
   * Set the account-wide API Gateway CloudWatch role (needed for execution logging). Only one
   * stack per account/region should own it: pass `-c apiGatewayAccountRole=false` for the second
   * stage deployed into the same account.
   */
  manageApiGatewayAccountRole: boolean;
  /**
   * Whether `-c stage=` was given. Without it the app still synthesizes the dev stage (offline
   * `npm run synth`, tests), but the template carries a CloudFormation rule that refuses every
   * deployment of it (infra/interop-stack.ts, RequireExplicitStage): `cdk deploy` needs a stage.
   */
  stageExplicit: boolean;
  /** Cognito hosted sign-in domain prefix; default `interop-<stage>-staff-<account id>` (infra/staff-sign-in.ts) */
  staffDomainPrefix?: string;
  /** staff usage plan throttle (all signed-in staff together) */
  staffRateLimit: number;
  staffBurstLimit: number;
  /** endpoint access mode that goes with the REST API's enhanced security policy (BASIC or STRICT) */
  apiEndpointAccessMode: 'BASIC' | 'STRICT';
  /** days AWS Backup keeps the daily table backups (35, 7 in dev) */
  backupRetentionDays: number;
  /** AWS Backup vault lock (default: every stage but dev). Governance mode unless backupVaultLockChangeableForDays is set. */
  backupVaultLock: boolean;
  /** compliance mode: the lock becomes immutable this many days (3 or more) after the deployment that sets it */
  backupVaultLockChangeableForDays?: number;
  /** ARN of a backup vault in another region or account that every daily backup is copied to */
  backupCopyVaultArn?: string;
  /** days the copies are kept (default backupRetentionDays) */
  backupCopyRetentionDays: number;
}

const STAGE_PATTERN = /^[a-z][a-z0-9-]{1,15}$/;
const RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];

type ContextReader = Pick<Node, 'tryGetContext'>;

function str(node: ContextReader, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  return String(value);
}

function int(node: ContextReader, key: string, fallback: number): number {
  const raw = str(node, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`context ${key} must be a positive integer, got "${raw}"`);
  return value;
}

function bool(node: ContextReader, key: string, fallback: boolean): boolean {
  const raw = str(node, key);
  if (raw === undefined) return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new Error(`context ${key} must be true or false, got "${raw}"`);
}

/** Reads and validates the stage settings. `env` defaults to process.env (CDK_DEFAULT_ACCOUNT/REGION). */
export function readStageConfig(node: ContextReader, env: NodeJS.ProcessEnv = process.env): StageConfig {
  const stageExplicit = str(node, 'stage') !== undefined;
  const stage = str(node, 'stage') ?? DEFAULT_STAGE;
  if (!STAGE_PATTERN.test(stage)) throw new Error(`context stage must match ${STAGE_PATTERN} (lower-case, 2-16 chars), got "${stage}"`);
  const retainData = stage !== 'dev';
  const logRetentionDays = int(node, 'logRetentionDays', retainData ? 365 : 30);
  if (!RETENTION_DAYS.includes(logRetentionDays)) throw new Error(`context logRetentionDays must be one of ${RETENTION_DAYS.join(', ')}`);
  const logLevel = (str(node, 'logLevel') ?? (retainData ? 'info' : 'debug')) as StageConfig['logLevel'];
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new Error(`context logLevel must be debug, info, warn or error, got "${logLevel}"`);
  const account = str(node, 'account') ?? env.CDK_DEFAULT_ACCOUNT;
  if (account !== undefined && !/^\d{12}$/.test(account)) throw new Error(`account must be 12 digits, got "${account}"`);
  const staffDomainPrefix = str(node, 'staffDomainPrefix');
  if (staffDomainPrefix !== undefined && (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(staffDomainPrefix) || /aws|amazon|cognito/.test(staffDomainPrefix))) {
    throw new Error(
      `context staffDomainPrefix must be 1-63 lower-case letters, digits or hyphens without "aws", "amazon" or "cognito", got "${staffDomainPrefix}"`,
    );
  }
  const apiEndpointAccessMode = str(node, 'apiEndpointAccessMode') ?? 'BASIC';
  if (apiEndpointAccessMode !== 'BASIC' && apiEndpointAccessMode !== 'STRICT')
    throw new Error(`context apiEndpointAccessMode must be BASIC or STRICT, got "${apiEndpointAccessMode}"`);
  const backupRetentionDays = retainData ? 35 : 7;
  const backupVaultLockChangeableForDays =
    str(node, 'backupVaultLockChangeableForDays') === undefined ? undefined : int(node, 'backupVaultLockChangeableForDays', 0);
  if (backupVaultLockChangeableForDays !== undefined && backupVaultLockChangeableForDays < 3)
    throw new Error('context backupVaultLockChangeableForDays must be 3 or more');
  const backupCopyVaultArn = str(node, 'backupCopyVaultArn');
  if (backupCopyVaultArn !== undefined && !/^arn:aws[a-z-]*:backup:[a-z0-9-]+:\d{12}:backup-vault:[A-Za-z0-9_.-]+$/.test(backupCopyVaultArn)) {
    throw new Error(
      `context backupCopyVaultArn must be a backup vault ARN (arn:aws:backup:<region>:<account>:backup-vault:<name>), got "${backupCopyVaultArn}"`,
    );
  }
  return {
    stage,
    prefix: `interop-${stage}`,
    account,
    region: str(node, 'region') ?? env.CDK_DEFAULT_REGION ?? DEFAULT_REGION,
    retainData,
    logRetentionDays,
    logLevel,
    hl7SendingApplication: str(node, 'hl7SendingApplication') ?? 'INTEROP',
    hl7SendingFacility: str(node, 'hl7SendingFacility') ?? 'INTEROP',
    hl7IdentifierNamespace: str(node, 'hl7IdentifierNamespace') ?? 'INTEROP',
    chartAssigningAuthority: str(node, 'chartAssigningAuthority') ?? DEFAULT_CHART_ASSIGNING_AUTHORITY,
    hl7AcceptProcessingIds: str(node, 'hl7AcceptProcessingIds') ?? 'P',
    anonRateLimit: int(node, 'anonRateLimit', DEFAULT_ANONYMOUS_LIMIT.limit),
    anonRateWindowSeconds: int(node, 'anonRateWindowSeconds', DEFAULT_ANONYMOUS_LIMIT.windowSeconds),
    stageRateLimit: int(node, 'stageRateLimit', 500),
    stageBurstLimit: int(node, 'stageBurstLimit', 1000),
    wafRequestsPerIpPer5Min: int(node, 'wafRequestsPerIpPer5Min', 6000),
    alarmEmail: str(node, 'alarmEmail'),
    wafBlockedAlarmThreshold: int(node, 'wafBlockedAlarmThreshold', 100),
    apiLatencyP99AlarmMs: int(node, 'apiLatencyP99AlarmMs', 5000),
    api4xxAlarmRatePercent: int(node, 'api4xxAlarmRatePercent', 25),
    api429AlarmRatePercent: int(node, 'api429AlarmRatePercent', 5),
    apiAlarmMinRequests: int(node, 'apiAlarmMinRequests', 100),
    kmsRequestsPerSecondAlarm: int(node, 'kmsRequestsPerSecondAlarm', 4400),
    patientReadsAlarmThreshold: int(node, 'patientReadsAlarmThreshold', DEFAULT_PATIENT_READS_ALARM_THRESHOLD),
    reservedConcurrency: bool(node, 'reservedConcurrency', retainData),
    manageApiGatewayAccountRole: bool(node, 'apiGatewayAccountRole', true),
    stageExplicit,
    staffDomainPrefix,
    staffRateLimit: int(node, 'staffRateLimit', StaffTier.rateLimit),
    staffBurstLimit: int(node, 'staffBurstLimit', StaffTier.burstLimit),
    apiEndpointAccessMode,
    backupRetentionDays,
    backupVaultLock: bool(node, 'backupVaultLock', retainData),
    backupVaultLockChangeableForDays,
    backupCopyVaultArn,
    backupCopyRetentionDays: int(node, 'backupCopyRetentionDays', backupRetentionDays),
  };
}

/**
 * Value of the anonymous usage plan's API key. Derived from the stage, not secret: with
 * `apiKeySource: AUTHORIZER` the gateway never reads a key from the request; only the authorizer
 * names the key a request is metered against, and it names this one only for requests it has
 * already decided are unauthenticated (answered 401/429). Knowing the value grants nothing, so a
 * deterministic value avoids a custom resource (and its Lambda, role and wildcard) that would only
 * read a generated value back.
 */
export function anonymousUsageIdentifier(prefix: string): string {
  return `${prefix}-anonymous-usage-identifier-v1`;
}

/**
 * Value of the staff usage plan's API key, named by the authorizer for requests it authenticated
 * with a staff ID token. Not secret for the same reasons as the anonymous one: the gateway never
 * reads a key from the request (`apiKeySource: AUTHORIZER`), so knowing it grants nothing.
 */
export function staffUsageIdentifier(prefix: string): string {
  return `${prefix}-staff-usage-identifier-v1`;
}
