/**
 * Where the operator CLIs act: the running local stack (default; its endpoints come from
 * .local/endpoints.json) or a deployed stage (`--stage NAME`, or INTEROP_STAGE; credentials and
 * AWS_REGION from the usual AWS environment). Failures that mean "wrong target" (no local stack,
 * no credentials, no such stage) become one line that says what to do.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { AuditTrail } from '../audit/audit-trail';
import { Tables, resourceName } from '../config/service';
import { stagePrefix, usagePlanParameterName } from '../config/stage-parameters';
import type { PartnerTier } from '../keys/api-key';
import { dynamoDbClient } from '../aws/clients';
import { tableName } from '../dynamo/table-names';
import { ApiKeyStore } from '../keys/api-key-store';
import { ChartItemReader } from '../chart/chart-reader';
import type { RelationshipTable } from '../relationships/relationships';
import { GatewayKeys, StageNotFoundError, type UsagePlanIds } from './gateway-keys';

export interface AdminTarget {
  /** e.g. "local stack" or "stage prod (eu-west-1)" */
  description: string;
  store: ApiKeyStore;
  gateway?: GatewayKeys;
  /** where every partner and key change is recorded (lib/admin/admin-audit.ts) */
  auditTrail: AuditTrail;
  /** the chart table: partner-patient relationships (`partners relate`) and the chart patients they name */
  chart: RelationshipTable & { patients: ChartItemReader };
  stage?: string;
}

function chartOf(db: DynamoDBClient, table: string): AdminTarget['chart'] {
  return { db, table, patients: new ChartItemReader(db, table) };
}

const STAGE_PATTERN = /^[a-z][a-z0-9-]{1,15}$/;

/** Clients for a deployed stage; tests pass their own (aws-sdk-client-mock, a local DynamoDB). */
export interface StageClients {
  dynamodb: DynamoDBClient;
  apiGateway: APIGatewayClient;
  ssm: SSMClient;
  region: string;
}

export function stageClients(env: NodeJS.ProcessEnv = process.env): StageClients {
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (!region) throw new StageNotFoundError('no AWS region: set AWS_REGION (the region the stage is deployed in)');
  const common = { region, maxAttempts: 3 };
  return { region, dynamodb: new DynamoDBClient(common), apiGateway: new APIGatewayClient(common), ssm: new SSMClient(common) };
}

/** The tier's usage plan id from the SSM parameter the stack writes (`prefix`: `interop-<stage>`). */
export function ssmUsagePlanIds(ssm: SSMClient, prefix: string): UsagePlanIds {
  return async (tier: PartnerTier) => {
    const name = usagePlanParameterName(prefix, tier);
    try {
      const out = await ssm.send(new GetParameterCommand({ Name: name }));
      const id = out.Parameter?.Value;
      if (!id) throw new StageNotFoundError(`SSM parameter ${name} is empty: redeploy the stack`);
      return id;
    } catch (error) {
      if ((error as Error).name === 'ParameterNotFound') {
        throw new StageNotFoundError(
          `stage ${prefix} has no usage plan for tier ${tier} (SSM parameter ${name} not found): deploy the stack first, or check --stage and AWS_REGION`,
        );
      }
      throw error;
    }
  };
}

export function stageTarget(stage: string, clients: StageClients): AdminTarget {
  if (!STAGE_PATTERN.test(stage)) throw new StageNotFoundError(`--stage must be a stage name like dev or prod (lower-case, 2-16 characters), got "${stage}"`);
  const prefix = stagePrefix(stage);
  return {
    description: `stage ${stage} (${clients.region})`,
    stage,
    store: new ApiKeyStore(clients.dynamodb, resourceName(prefix, Tables.keys.baseName)),
    gateway: new GatewayKeys(clients.apiGateway, ssmUsagePlanIds(clients.ssm, prefix)),
    auditTrail: new AuditTrail(clients.dynamodb, resourceName(prefix, Tables.audit.baseName)),
    chart: chartOf(clients.dynamodb, resourceName(prefix, Tables.chart.baseName)),
  };
}

/**
 * The running local stack. `useLocalEnvironment` loads its endpoints into process.env (the scripts
 * pass lib/local's reader: nothing under lib/ but lib/local may import the local stack).
 */
export function localTarget(useLocalEnvironment: () => void = () => undefined): AdminTarget {
  useLocalEnvironment();
  return {
    description: 'local stack',
    store: new ApiKeyStore(dynamoDbClient(), tableName('keys')),
    auditTrail: new AuditTrail(dynamoDbClient(), tableName('audit')),
    // read when a relationship command runs: the other commands need no CHART_TABLE
    get chart() {
      return chartOf(dynamoDbClient(), tableName('chart'));
    },
  };
}

/** `--stage` wins, then INTEROP_STAGE, else the local stack. */
export function resolveTarget(stageOption: string | undefined, useLocalEnvironment: () => void, env: NodeJS.ProcessEnv = process.env): AdminTarget {
  // the SDK's Node.js version notice is noise for an operator tool (the runtime is checked by npm's engines)
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const stage = stageOption ?? (env.INTEROP_STAGE || undefined);
  return stage ? stageTarget(stage, stageClients(env)) : localTarget(useLocalEnvironment);
}

function codeOf(error: unknown): string | undefined {
  const e = error as { code?: string; cause?: { code?: string }; errors?: Array<{ code?: string }> };
  return e.code ?? e.cause?.code ?? e.errors?.find((x) => x.code)?.code;
}

/** What every CLI prints when the local stack is not running (no .local/endpoints.json, or nothing listening). */
export const LOCAL_STACK_NOT_RUNNING = 'the local stack is not running: run `npm start` first (or target a deployed stage: see --help)';

/** ECONNREFUSED anywhere in the error, its causes or their aggregated errors. */
export function isConnectionRefused(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { message?: unknown; cause?: unknown; errors?: unknown };
  if (codeOf(error) === 'ECONNREFUSED' || (typeof e.message === 'string' && /ECONNREFUSED/.test(e.message))) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isConnectionRefused(x, depth + 1))) return true;
  return e.cause !== error && isConnectionRefused(e.cause, depth + 1);
}

/** One line for a failure that is about the target, or undefined for anything else. */
export function explainTargetFailure(error: unknown, target: Pick<AdminTarget, 'description' | 'stage'> | undefined): string | undefined {
  const name = (error as Error).name;
  const message = (error as Error).message ?? '';
  const local = !target || !target.stage;
  // thrown by lib/local/endpoints-file.ts when .local/endpoints.json is missing (matched by name: lib/admin may not import lib/local)
  if (name === 'LocalStackNotRunningError') return LOCAL_STACK_NOT_RUNNING;
  if (isConnectionRefused(error)) return local ? LOCAL_STACK_NOT_RUNNING : `cannot reach AWS for ${target!.description}: ${message}`;
  if (name === 'StageNotFoundError' || name === 'MissingConfigurationError') return message;
  if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(message)) {
    return `no AWS credentials for ${target?.description ?? 'the stage'}: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY for the stage's account`;
  }
  if (['UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException', 'ExpiredToken', 'InvalidClientTokenId'].includes(name)) {
    return `AWS refused the credentials for ${target?.description ?? 'the stage'} (${name}): refresh them and run the command again`;
  }
  if (name === 'AccessDeniedException' || name === 'AccessDenied') return `access denied on ${target?.description ?? 'the stage'}: ${message}`;
  if (name === 'ResourceNotFoundException') {
    return local
      ? 'the local stack has no keys table: restart it with `npm start`'
      : `${target!.description} not found: its keys table does not exist (deploy the stack first, or check --stage and AWS_REGION)`;
  }
  return undefined;
}
