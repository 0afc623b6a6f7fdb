/**
 * One Lambda function of the service: entry `functions/<name>.ts` (export `handler`), bundled
 * locally by esbuild into one minified ESM file with the AWS SDK inside, its own KMS-encrypted log
 * group, its own role holding exactly what its `needs` allow, and environment variables named by
 * `Env` for exactly the resources it needs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, SourceMapMode, LogLevel as EsbuildLogLevel } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { Env, Queues, Tables, type BundledFile, type EnvName, type QueueId, type ResourceNeeds, type TableId } from '../lib/config/service';
import { ESM_REQUIRE_BANNER, LAMBDA_ESBUILD_TARGET, LAMBDA_MAIN_FIELDS } from '../lib/config/lambda-bundle';
import type { StageConfig } from './config';
import { FunctionRole, statementsForNeeds, type DataResources } from './least-privilege';
import { acknowledge } from './nag';

export const REPO_ROOT = path.resolve(__dirname, '..');
export const DEFAULT_FUNCTIONS_DIR = path.join(REPO_ROOT, 'functions');

/** Node.js runtime: the newest aws-cdk-lib 2.276 knows (also what cdk-nag AwsSolutions-L1 expects). */
export const RUNTIME = lambda.Runtime.NODEJS_24_X;
export const ARCHITECTURE = lambda.Architecture.ARM_64;

/** The createRequire banner of every bundle (lib/config/lambda-bundle.ts). */
export { ESM_REQUIRE_BANNER };

export type FunctionKind = 'http' | 'authorizer' | 'queue' | 'schedule';

export interface FunctionSpec {
  name: string;
  kind: FunctionKind;
  needs: ResourceNeeds;
  memoryMb: number;
  timeoutSeconds: number;
  reservedConcurrency?: number;
  /** variables beyond those derived from `needs` (e.g. the authorizer's anonymous limits) */
  extraEnvironment?: Partial<Record<EnvName, string>>;
  /** queue a queue-kind background function consumes (event source mapping) */
  consumes?: QueueId;
  /** async-invocation dead-letter queue (scheduled functions) */
  deadLetterQueue?: sqs.IQueue;
  /** files copied beside the bundle (read from $LAMBDA_TASK_ROOT at run time) */
  bundledFiles?: BundledFile[];
}

export function entryPath(functionsDir: string, name: string): string {
  return path.join(functionsDir, `${name}.ts`);
}

/** Fails synthesis with one message naming every function whose entry file is missing. */
export function assertEntriesExist(specs: Array<Pick<FunctionSpec, 'name'>>, entryFor: (name: string) => string): void {
  const missing = specs.map((s) => entryFor(s.name)).filter((file) => !fs.existsSync(file));
  if (missing.length) {
    throw new Error(`missing Lambda entry file(s) (each must export \`handler\`):\n  ${missing.map((f) => path.relative(REPO_ROOT, f)).join('\n  ')}`);
  }
}

/** Fails synthesis naming every bundled file that is not in the repository (e.g. `npm ci` not run). */
export function assertBundledFilesExist(specs: Array<Pick<FunctionSpec, 'name' | 'bundledFiles'>>): void {
  const missing = specs.flatMap((s) =>
    (s.bundledFiles ?? []).filter((f) => !fs.existsSync(path.join(REPO_ROOT, f.source))).map((f) => `${s.name}: ${f.source}`),
  );
  if (missing.length) throw new Error(`missing bundled file(s) (run npm ci; npm run openapi):\n  ${missing.join('\n  ')}`);
}

/** Shell commands copying a function's bundled files into its package (NodejsFunction afterBundling). */
export function copyBundledFilesCommands(files: BundledFile[], inputDir: string, outputDir: string): string[] {
  return files.map((f) => `cp "${path.join(inputDir, f.source)}" "${path.join(outputDir, f.name)}"`);
}

/** The environment a function gets: names from `Env`, values only for the resources it needs. */
export function environmentFor(spec: FunctionSpec, data: DataResources, config: StageConfig): Record<string, string> {
  const env: Record<string, string> = {
    [Env.stage]: config.stage,
    [Env.logLevel]: config.logLevel,
    NODE_OPTIONS: '--enable-source-maps',
  };
  for (const id of Object.keys(spec.needs.tables ?? {}) as TableId[]) env[Tables[id].env] = data.tables[id].tableName;
  const queueIds = new Set([...(Object.keys(spec.needs.queues ?? {}) as QueueId[]), ...(spec.consumes ? [spec.consumes] : [])]);
  for (const id of queueIds) env[Queues[id].env] = data.queues[id].queueUrl;
  if (spec.needs.kms?.length) env[Env.kmsKeyId] = data.key.keyArn;
  if (spec.needs.documentsBucket) env[Env.documentsBucket] = data.documentsBucket.bucketName;
  if (spec.kind !== 'authorizer') {
    env[Env.hl7SendingApplication] = config.hl7SendingApplication;
    env[Env.hl7SendingFacility] = config.hl7SendingFacility;
    env[Env.hl7IdentifierNamespace] = config.hl7IdentifierNamespace;
    env[Env.chartAssigningAuthority] = config.chartAssigningAuthority;
    env[Env.hl7AcceptProcessingIds] = config.hl7AcceptProcessingIds;
  }
  // an export or FHIR read counts the partner's distinct patients of the hour (its rate-limit table grant)
  if (spec.needs.tables?.rateLimit && spec.kind !== 'authorizer') env[Env.patientReadsAlarmThreshold] = String(config.patientReadsAlarmThreshold);
  for (const [name, value] of Object.entries(spec.extraEnvironment ?? {})) if (value !== undefined) env[name] = value;
  return env;
}

/**
 * `needs.apiGatewayKeys` as IAM (revokeExpiredKeys): find partner API keys by name (`GET /apikeys`)
 * and delete one (`DELETE /apikeys/{id}`); never usage plans, never creating or changing a key.
 */
export function apiGatewayKeyStatements(needs: ResourceNeeds, scope: Construct): iam.PolicyStatement[] {
  if (needs.apiGatewayKeys !== 'delete') return [];
  const { partition, region } = Stack.of(scope);
  const apiKeys = `arn:${partition}:apigateway:${region}::/apikeys`;
  return [
    new iam.PolicyStatement({ sid: 'FindApiKeys', actions: ['apigateway:GET'], resources: [apiKeys] }),
    new iam.PolicyStatement({ sid: 'DeleteApiKeys', actions: ['apigateway:DELETE'], resources: [`${apiKeys}/*`] }),
  ];
}

export interface ServiceFunctionProps {
  spec: FunctionSpec;
  config: StageConfig;
  data: DataResources;
  entry: string;
}

export class ServiceFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: FunctionRole;
  readonly logGroup: logs.LogGroup;
  readonly functionName: string;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const { spec, config, data } = props;
    this.functionName = `${config.prefix}-${spec.name}`;

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `/aws/lambda/${this.functionName}`,
      encryptionKey: data.key,
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    this.role = new FunctionRole(this, 'Role', { description: `the ${this.functionName} function` });
    // log permissions on this function's own log group only (instead of AWSLambdaBasicExecutionRole)
    this.logGroup.grantWrite(this.role);
    for (const statement of statementsForNeeds(spec.needs, data, { consumes: spec.consumes, sendsToDeadLetterQueue: Boolean(spec.deadLetterQueue) }))
      this.role.addToPrincipalPolicy(statement);
    const apiKeyStatements = apiGatewayKeyStatements(spec.needs, this);
    for (const statement of apiKeyStatements) this.role.addToPrincipalPolicy(statement);
    if (apiKeyStatements.length) {
      // cdk-nag names the resource as synthesized: pseudo parameters as <AWS::...> when the environment is not given
      const { partition, region } = Stack.of(this);
      const shown = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
      acknowledge(
        this.role.policy,
        `AwsSolutions-IAM5[Resource::arn:${shown(partition, 'Partition')}:apigateway:${shown(region, 'Region')}::/apikeys/*]`,
        'DELETE on API keys only (the API keys of revoked partner keys, whose ids are made when each key is issued and cannot be listed in advance); no usage plan, stage or API resource matches this path.',
      );
    }

    this.fn = new NodejsFunction(this, 'Function', {
      functionName: this.functionName,
      description: `${spec.kind} function ${spec.name} (functions/${spec.name}.ts)`,
      entry: props.entry,
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
      runtime: RUNTIME,
      architecture: ARCHITECTURE,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(spec.timeoutSeconds),
      reservedConcurrentExecutions: spec.reservedConcurrency,
      role: this.role,
      logGroup: this.logGroup,
      tracing: lambda.Tracing.ACTIVE,
      environment: environmentFor(spec, data, config),
      deadLetterQueue: spec.deadLetterQueue,
      ...(spec.kind === 'schedule' ? { retryAttempts: 2, maxEventAge: Duration.hours(1) } : {}),
      // the esbuild options of lib/config/lambda-bundle.ts (= scripts/build.ts LAMBDA_BUNDLE_OPTIONS,
      // what npm run build and the bench measure): index.mjs.map beside the bundle, linked, not inline
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: LAMBDA_ESBUILD_TARGET,
        mainFields: LAMBDA_MAIN_FIELDS,
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        sourcesContent: false,
        esbuildArgs: { '--legal-comments': 'none' },
        // bundle everything, AWS SDK v3 included: the versions in package-lock.json are what runs
        externalModules: [],
        logLevel: EsbuildLogLevel.WARNING,
        ...(spec.bundledFiles?.length
          ? {
              commandHooks: {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (inputDir: string, outputDir: string) => copyBundledFilesCommands(spec.bundledFiles!, inputDir, outputDir),
              },
            }
          : {}),
      },
    });
    // the policy must exist before the function (the event source mapping is validated on create)
    this.fn.node.addDependency(this.role.policy);
  }
}
