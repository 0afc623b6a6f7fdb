/**
 * The whole service in one stack, built from lib/config/service.ts: every function of
 * `HttpEndpoints`, `AuthorizerFunction` and `BackgroundFunctions`, every table of `Tables`, every
 * queue of `Queues`. Nothing here lists functions, tables or queues a second time.
 * Two nested stacks keep this stack well below CloudFormation's 500 resources
 * (infra/stack-limits.test.ts, infra/README.md "Stack layout"): the API's per-endpoint resources,
 * methods and invoke permissions (`PartnerApi/Endpoints`, infra/partner-api.ts), and the alarms with
 * the operations dashboard (`Alarms/Stack`, infra/alarms.ts).
 */
import { StaffSignIn } from './staff-sign-in';
import { Annotations, CfnOutput, CfnParameter, CfnRule, Duration, Fn, RemovalPolicy, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import {
  AuthorizerFunction,
  BackgroundFunctions,
  Env,
  HttpEndpoints,
  Queues,
  Tables,
  type BackgroundFunction,
  type HttpEndpoint,
  type QueueId,
  type ResourceNeeds,
} from '../lib/config/service';
import { usagePlanParameterName } from '../lib/config/stage-parameters';
import { Alarms } from './alarms';
import { PartnerTiers, anonymousUsageIdentifier, staffUsageIdentifier, type PartnerTier, type StageConfig } from './config';
import { DataStores, pascal, queueVisibilityTimeouts } from './data-stores';
import { acknowledge } from './nag';
import { PartnerApi } from './partner-api';
import { STAFF_USAGE_IDENTIFIER_ENV } from '../lib/keys/access-wiring';
import { DEFAULT_FUNCTIONS_DIR, ServiceFunction, assertBundledFilesExist, assertEntriesExist, entryPath, type FunctionSpec } from './service-function';
import { disclosesPatientRecords } from '../lib/disclosures/disclosing-routes';

/**
 * Reserved concurrency of background functions (HTTP functions and the authorizer have none: the
 * stage and usage-plan throttles bound them, and reserving for them would carve capacity out of
 * the account pool and make the API fail closed under load).
 * - queue consumers: caps how hard a backlog hits DynamoDB/KMS/partners downstream; the event
 *   source mapping's maxConcurrency is set to the same value so the poller never gets throttled
 *   (throttled batches would burn receive counts and land in the DLQ);
 * - scheduled functions: 1, so a slow run never overlaps the next one.
 */
export const ReservedConcurrencyByKind = { queue: 5, schedule: 1 } as const;
/** Per-function overrides by name (must name a background function of the list). */
export const ReservedConcurrencyOverrides: Record<string, number> = {};

export interface InteropStackProps extends StackProps {
  config: StageConfig;
  /** the lists default to lib/config/service.ts; tests may pass variations of them */
  httpEndpoints?: HttpEndpoint[];
  authorizer?: typeof AuthorizerFunction;
  backgroundFunctions?: BackgroundFunction[];
  reservedConcurrencyOverrides?: Record<string, number>;
  /** entry file of a function; default functions/<name>.ts */
  entryFor?: (name: string) => string;
}

const SCHEDULE_PATTERN = /^(rate|cron)\(.+\)$/;

/** Checks the lists for what CloudFormation would only reject at deploy time. */
export function validateFunctionLists(
  http: HttpEndpoint[],
  authorizerName: string,
  background: BackgroundFunction[],
  overrides: Record<string, number>,
  prefix = 'interop-dev',
): void {
  const names = [...http.map((e) => e.name), authorizerName, ...background.map((b) => b.name)];
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new Error(`function name ${duplicate} is used twice`);
  for (const name of names) {
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name)) throw new Error(`function name ${name} must be alphanumeric (it becomes part of the Lambda name)`);
    // Lambda function and EventBridge rule names are limited to 64 characters
    if (`${prefix}-${name}`.length > 64) throw new Error(`function name ${prefix}-${name} is longer than 64 characters`);
  }
  const routes = http.map((e) => `${e.method} ${e.path}`);
  const dupRoute = routes.find((r, i) => routes.indexOf(r) !== i);
  if (dupRoute) throw new Error(`route ${dupRoute} is defined twice`);
  for (const e of http) if (!e.path.startsWith('/')) throw new Error(`endpoint ${e.name}: path must start with /`);
  const consumers = new Map<QueueId, string>();
  for (const b of background) {
    if (b.kind === 'queue') {
      if (!b.queue || !(b.queue in Queues)) throw new Error(`queue function ${b.name} must name a queue of Queues (got ${b.queue})`);
      const other = consumers.get(b.queue);
      if (other) throw new Error(`queue ${b.queue} has two consumers: ${other} and ${b.name}`);
      consumers.set(b.queue, b.name);
      const visibility = Queues[b.queue].visibilityTimeoutSeconds;
      if (b.timeoutSeconds > visibility) {
        throw new Error(`queue function ${b.name}: timeout ${b.timeoutSeconds}s exceeds the visibility timeout of queue ${b.queue} (${visibility}s)`);
      }
    } else if (b.kind === 'schedule') {
      if (!b.schedule || !SCHEDULE_PATTERN.test(b.schedule))
        throw new Error(`schedule function ${b.name} needs a rate(...) or cron(...) schedule (got ${b.schedule})`);
    } else {
      throw new Error(`background function ${(b as BackgroundFunction).name} has unknown kind ${(b as BackgroundFunction).kind}`);
    }
  }
  for (const [name, value] of Object.entries(overrides)) {
    if (!background.some((b) => b.name === name)) throw new Error(`reserved concurrency override for ${name}, which is not a background function`);
    if (!Number.isInteger(value) || value < 1) throw new Error(`reserved concurrency for ${name} must be a positive integer`);
  }
}

export class InteropStack extends Stack {
  readonly config: StageConfig;
  readonly data: DataStores;
  readonly functions: Record<string, ServiceFunction> = {};
  readonly partnerApi: PartnerApi;
  readonly staffSignIn: StaffSignIn;
  readonly alarms: Alarms;

  constructor(scope: Construct, id: string, props: InteropStackProps) {
    super(scope, id, props);
    const config = (this.config = props.config);
    const http = props.httpEndpoints ?? HttpEndpoints;
    const authorizerDef = props.authorizer ?? AuthorizerFunction;
    const background = props.backgroundFunctions ?? BackgroundFunctions;
    const overrides = props.reservedConcurrencyOverrides ?? ReservedConcurrencyOverrides;
    const entryFor = props.entryFor ?? ((name: string) => entryPath(DEFAULT_FUNCTIONS_DIR, name));

    validateFunctionLists(http, authorizerDef.name, background, overrides, config.prefix);
    assertEntriesExist([...http, authorizerDef, ...background], entryFor);
    assertBundledFilesExist(http);

    Tags.of(this).add('Service', 'clinical-interop');
    Tags.of(this).add('Stage', config.stage);
    Tags.of(this).add('DataClassification', 'PHI');

    if (!config.stageExplicit) requireExplicitStageToDeploy(this);

    this.data = new DataStores(this, 'Data', config, queueVisibilityTimeouts(background));
    const data = this.data;
    const anonymousKeyValue = anonymousUsageIdentifier(config.prefix);
    const staffKeyValue = staffUsageIdentifier(config.prefix);

    const build = (spec: FunctionSpec) => {
      const f = new ServiceFunction(this, `Fn${pascal(spec.name)}`, { spec, config, data, entry: entryFor(spec.name) });
      this.functions[spec.name] = f;
      return f;
    };

    // ---- authorizer and HTTP endpoints ------------------------------------------------------
    const authorizer = build({
      name: authorizerDef.name,
      kind: 'authorizer',
      needs: authorizerDef.needs,
      memoryMb: authorizerDef.memoryMb,
      timeoutSeconds: authorizerDef.timeoutSeconds,
      extraEnvironment: {
        [Env.anonRateLimit]: String(config.anonRateLimit),
        [Env.anonRateWindowSeconds]: String(config.anonRateWindowSeconds),
        [Env.anonUsageIdentifier]: anonymousKeyValue,
      },
    });
    // not an `Env` name (lib/config/service.ts): the staff plan's key exists in the cloud only
    authorizer.fn.addEnvironment(STAFF_USAGE_IDENTIFIER_ENV, staffKeyValue);
    const endpoints = http.map((endpoint) => ({
      endpoint,
      fn: build({
        name: endpoint.name,
        kind: 'http',
        needs: endpoint.needs,
        memoryMb: endpoint.memoryMb,
        timeoutSeconds: endpoint.timeoutSeconds,
        bundledFiles: endpoint.bundledFiles,
      }).fn,
    }));

    // ---- background functions ---------------------------------------------------------------
    const scheduleDlqs: Record<string, sqs.Queue> = {};
    for (const b of background) {
      const reservedConcurrency = config.reservedConcurrency ? (overrides[b.name] ?? ReservedConcurrencyByKind[b.kind]) : undefined;
      if (b.kind === 'queue') {
        const queueId = b.queue!;
        const f = build({
          name: b.name,
          kind: 'queue',
          needs: b.needs,
          memoryMb: b.memoryMb,
          timeoutSeconds: b.timeoutSeconds,
          reservedConcurrency,
          consumes: queueId,
        });
        f.fn.addEventSourceMapping('Queue', {
          eventSourceArn: data.queues[queueId].queueArn,
          batchSize: 10,
          maxBatchingWindow: Duration.seconds(1),
          reportBatchItemFailures: true,
          maxConcurrency: Math.max(2, reservedConcurrency ?? ReservedConcurrencyByKind.queue),
        });
      } else {
        // failed async invocations (after 2 retries) of a scheduled run land here and alarm
        const dlq = new sqs.Queue(this, `Fn${pascal(b.name)}Failures`, {
          queueName: `${config.prefix}-${b.name}-failures`,
          encryption: sqs.QueueEncryption.KMS,
          encryptionMasterKey: data.key,
          enforceSSL: true,
          retentionPeriod: Duration.days(14),
          removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
        });
        scheduleDlqs[b.name] = dlq;
        const f = build({
          name: b.name,
          kind: 'schedule',
          needs: b.needs,
          memoryMb: b.memoryMb,
          timeoutSeconds: b.timeoutSeconds,
          reservedConcurrency,
          deadLetterQueue: dlq,
        });
        new events.Rule(this, `Fn${pascal(b.name)}Schedule`, {
          ruleName: `${config.prefix}-${b.name}`,
          description: `Runs ${b.name} on ${b.schedule}`,
          schedule: events.Schedule.expression(b.schedule!),
          targets: [new targets.LambdaFunction(f.fn, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
        });
      }
    }

    // ---- acknowledgements that apply per function ---------------------------------------------
    for (const [name, f] of Object.entries(this.functions)) {
      const kind = name === authorizerDef.name ? 'authorizer' : http.some((e) => e.name === name) ? 'http' : 'background';
      acknowledge(
        f.fn,
        'HIPAA.Security-LambdaInsideVPC',
        'The function reaches only AWS APIs (DynamoDB, SQS, KMS, S3, X-Ray) over TLS with IAM authorization; it has no VPC-private resources to reach, and a VPC would add NAT/endpoints without narrowing access.',
      );
      if (kind === 'background' && !config.reservedConcurrency) {
        acknowledge(
          f.fn,
          'HIPAA.Security-LambdaConcurrency',
          'Reserved concurrency is off on this stage (-c reservedConcurrency=false, the dev default) so that a new account at the default Lambda quota of 10 can deploy; the event source mapping maxConcurrency still bounds the queue worker.',
        );
      }
      if (kind !== 'background') {
        acknowledge(
          f.fn,
          'HIPAA.Security-LambdaConcurrency',
          'Invoked synchronously by API Gateway, which bounds it with stage and usage-plan throttles and WAF rate rules; reserved concurrency would carve capacity out of the account pool and turn load into 5XX.',
        );
      }
      if (kind !== 'background' || background.find((b) => b.name === name)?.kind === 'queue') {
        acknowledge(
          f.fn,
          'HIPAA.Security-LambdaDLQ',
          kind === 'background'
            ? 'Invoked by an SQS event source mapping, where a function DLQ is never used; failed messages go to the source queue redrive DLQ (alarmed).'
            : 'Invoked synchronously by API Gateway; a function DLQ only applies to asynchronous invocations, and failures are returned to the caller as problem+json.',
        );
      }
      acknowledge(
        f.role.policy,
        'AwsSolutions-IAM5[Resource::*]',
        'X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions; this is the only statement of the policy with a wildcard resource.',
      );
    }
    for (const [name, f] of Object.entries(this.functions)) {
      const needs: ResourceNeeds | undefined =
        http.find((e) => e.name === name)?.needs ??
        background.find((b) => b.name === name)?.needs ??
        (name === authorizerDef.name ? authorizerDef.needs : undefined);
      if (needs?.documentsBucket) {
        acknowledge(
          f.role.policy,
          `AwsSolutions-IAM5[Resource::<${this.getLogicalId(data.documentsBucket.node.defaultChild as never)}.Arn>/*]`,
          'Object-level actions (GetObject/PutObject only, as the function needs) on the objects of the one documents bucket; object keys are created per request, so they cannot be listed in advance.',
        );
      }
    }

    // ---- API ----------------------------------------------------------------------------------
    this.partnerApi = new PartnerApi(this, 'PartnerApi', {
      config,
      key: data.key,
      authorizerFunction: authorizer.fn,
      endpoints,
      anonymousKeyValue,
      staffKeyValue,
    });

    // ---- staff sign-in for the inbox page (the page itself is the serveInboxPage endpoint) -----
    // the page URL is built from the API id and stage name, not from the deployment, so the user
    // pool client does not depend on the methods that depend on the authorizer that reads it
    const pageUrl = `https://${this.partnerApi.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${config.stage}/inbox`;
    this.staffSignIn = new StaffSignIn(this, 'StaffSignIn', { config, pageUrl });
    for (const name of [authorizerDef.name, ...http.filter((e) => e.staffSignIn).map((e) => e.name)]) {
      const fn = this.functions[name]?.fn;
      if (!fn) continue;
      for (const [key, value] of Object.entries(this.staffSignIn.environment)) fn.addEnvironment(key, value);
    }

    // ---- alarms -------------------------------------------------------------------------------
    const deadLetterQueues: Record<string, sqs.IQueue> = {};
    for (const [id, dlq] of Object.entries(data.deadLetterQueues)) deadLetterQueues[Queues[id as QueueId].baseName] = dlq;
    for (const [name, dlq] of Object.entries(scheduleDlqs)) deadLetterQueues[`${name}-failures`] = dlq;
    this.alarms = new Alarms(this, 'Alarms', {
      config,
      key: data.key,
      api: this.partnerApi.api,
      functions: Object.fromEntries(Object.entries(this.functions).map(([name, f]) => [name, f.fn])),
      httpFunctions: http.map((e) => e.name),
      disclosingFunctions: http.filter((e) => disclosesPatientRecords(e) && Boolean(e.needs.tables?.audit)).map((e) => e.name),
      authorizerName: authorizerDef.name,
      deadLetterQueues,
      sourceQueues: Object.fromEntries(Object.values(Queues).map((def) => [def.baseName, data.queues[def.id]])),
      tables: data.tables,
      timeoutSeconds: Object.fromEntries([...http, authorizerDef, ...background].map((f) => [f.name, f.timeoutSeconds])),
      endpoints: http.map((e) => ({ name: e.name, method: e.method, path: e.path })),
      webAclName: this.partnerApi.webAcl.name!,
      accessLogs: this.partnerApi.accessLogs,
      backupVaultName: data.backupVault.backupVaultName,
    });
    if (config.retainData && !config.alarmEmail) {
      Annotations.of(this).addWarningV2(
        'interop:alarmEmail',
        `stage ${config.stage} has no alarm subscriber: pass -c alarmEmail=ops@example.org (required for production; alarms are otherwise delivered to nobody)`,
      );
    }

    // ---- outputs ------------------------------------------------------------------------------
    const out = (id: string, value: string, description: string) => new CfnOutput(this, id, { value, description });
    out('StageName', config.stage, 'Deployment stage');
    out('ApiUrl', this.partnerApi.api.url, 'Base URL of the partner API (stage included)');
    out('RestApiId', this.partnerApi.api.restApiId, 'REST API id');
    // the API reference (serveApiReference, serveOpenApiDocument): published with the stage, no key
    out('ApiReferenceUrl', this.partnerApi.api.urlForPath('/docs'), 'The browsable API reference (Redoc page of the OpenAPI document); no key needed');
    out('OpenApiDocumentUrl', this.partnerApi.api.urlForPath('/openapi.json'), 'The OpenAPI 3.1 document of this stage; no key needed');
    out('InboxPageUrl', pageUrl, 'The interop inbox page for clinic staff (sign-in through the staff user pool)');
    out('StaffUserPoolId', this.staffSignIn.userPool.userPoolId, 'Cognito user pool of clinic staff (add reviewers to the group interop-reviewers)');
    for (const def of Object.values(Tables)) out(`Table${pascal(def.id)}Name`, data.tables[def.id].tableName, `DynamoDB table ${def.id} (${def.env})`);
    for (const def of Object.values(Queues)) {
      out(`Queue${pascal(def.id)}Url`, data.queues[def.id].queueUrl, `SQS queue ${def.id} (${def.env})`);
      out(`Queue${pascal(def.id)}DlqUrl`, data.deadLetterQueues[def.id].queueUrl, `Dead-letter queue of ${def.id}`);
    }
    out('KmsKeyArn', data.key.keyArn, `Customer-managed key (${Env.kmsKeyId})`);
    out('DocumentsBucketName', data.documentsBucket.bucketName, `Documents bucket (${Env.documentsBucket})`);
    out('AccessLogsBucketName', data.accessLogsBucket.bucketName, 'S3 server access logs of the documents bucket');
    for (const tier of Object.keys(PartnerTiers) as PartnerTier[]) {
      out(
        `UsagePlanId${pascal(tier)}`,
        this.partnerApi.usagePlans[tier].usagePlanId,
        `Usage plan of the ${tier} partner tier (npm run keys attaches partner keys here)`,
      );
      // what `npm run keys -- create --stage <stage>` reads to find the tier's plan
      new ssm.StringParameter(this, `UsagePlanParameter${pascal(tier)}`, {
        parameterName: usagePlanParameterName(config.prefix, tier),
        stringValue: this.partnerApi.usagePlans[tier].usagePlanId,
        description: `Usage plan id of the ${tier} partner tier (read by npm run keys)`,
      });
    }
    out('UsagePlanIdAnonymous', this.partnerApi.anonymousPlan.usagePlanId, 'Usage plan metering requests without a usable key');
    out('UsagePlanIdStaff', this.partnerApi.staffPlan.usagePlanId, 'Usage plan metering requests of signed-in staff (staff ID token)');
    out('BackupVaultName', data.backupVault.backupVaultName, 'AWS Backup vault of the daily table backups');
    out('AlarmTopicArn', this.alarms.topic.topicArn, 'SNS topic of every alarm');
    out('DashboardName', `${config.prefix}-operations`, 'CloudWatch operations dashboard');
  }
}

/** Name of the parameter and the rule that make a template synthesized without `-c stage` undeployable. */
export const EXPLICIT_STAGE_PARAMETER = 'InteropStageExplicit';
export const EXPLICIT_STAGE_RULE = 'RequireExplicitStage';

/**
 * Without `-c stage=` the app synthesizes the dev stage (so `npm run synth` and the tests work
 * offline), but a deployment of that template must not happen by accident: dev destroys its tables
 * and logs with the stack. The CDK CLI does not tell the app which command runs, so the refusal is
 * in the template: a CloudFormation rule (evaluated before any resource is touched, on create,
 * update and change set) fails unless the parameter says the stage was chosen, which it never does
 * by default. `cdk deploy -c stage=dev` synthesizes a template without the rule and parameter.
 */
function requireExplicitStageToDeploy(stack: Stack): void {
  const explicit = new CfnParameter(stack, EXPLICIT_STAGE_PARAMETER, {
    type: 'String',
    default: 'no',
    allowedValues: ['no'],
    description: 'Synthesized without -c stage=: this template is not meant to be deployed. Deploy with -c stage=<stage>.',
  });
  new CfnRule(stack, EXPLICIT_STAGE_RULE, {
    assertions: [
      {
        assert: Fn.conditionEquals(explicit.valueAsString, 'yes'),
        assertDescription:
          'No stage was given: run cdk deploy with -c stage=<stage> (for example -c stage=dev; dev destroys its tables and logs with the stack). See infra/README.md, "Commands".',
      },
    ],
  });
}
