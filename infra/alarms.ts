/**
 * Alarms, all publishing to one KMS-encrypted SNS topic whose policy lets CloudWatch alarms of
 * this account and stage (aws:SourceAccount / aws:SourceArn) publish:
 * - every dead-letter queue: any message at all (depth > 0);
 * - every source queue: oldest message older than 15 minutes (consumer stuck, or none at all);
 * - the API: 5XX rate above 5 % of at least 20 requests in 5 minutes;
 * - every function: any error (for the authorizer: every request answered 503), any throttle,
 *   p99 duration above 80 % of its timeout for 15 minutes;
 * - every HTTP function: any 5xx it answered itself (handled, so Lambda's Errors miss it), counted
 *   from its request log line by a metric filter on its log group;
 * - every table: any read or write throttle event;
 * - WAF: blocked requests above `wafBlockedAlarmThreshold` in 5 minutes (an attack or a partner
 *   stuck in a retry loop);
 * - AWS Backup: any failed, aborted or expired backup job or failed copy job of the tables' vault;
 * - every global secondary index: any read or write throttle event (the table alarms leave them out);
 * - the API: p99 latency above `apiLatencyP99AlarmMs` for 15 minutes; 4XX above
 *   `api4xxAlarmRatePercent` % and 429 above `api429AlarmRatePercent` % of at least
 *   `apiAlarmMinRequests` requests in 5 minutes; any request refused because a key's monthly
 *   usage-plan quota is used up (429 and 429-quota are counted from the access log's `status` and
 *   `errorType` by metric filters in the nested stack: API Gateway publishes no metric for either);
 * - KMS: the account's cryptographic requests per second above `kmsRequestsPerSecondAlarm`
 *   (AWS/Usage CallCount: KMS publishes no throttle metric for customer managed keys; a throttled
 *   call fails its function, so the function error and API 5XX alarms see the throttling itself);
 * and the operations dashboard (`interop-<stage>-operations`).
 * All of it is derived from the function, table and queue lists: a new endpoint gets its alarms
 * and its dashboard lines without an edit here.
 *
 * Stack layout: the topic (with its policy and subscription) stays in the stage's stack, so its
 * ARN and its confirmed subscriptions never change; the alarms and the dashboard live in a nested
 * stack (`Alarms/Stack`, one `cdk deploy` still deploys both), because they grow with the function
 * list (3 alarms per function, 2 more resources per HTTP function for the handled 5xx) and would
 * otherwise push the stage's stack past CloudFormation's 500 resources. The nested stack reads
 * function, queue and table names, the topic ARN and the API stage through CloudFormation
 * parameters (one per referenced resource, 200 at most).
 *
 * Every alarm's description ends with the infra/README.md section ("Answer an alarm") that says
 * what to look at and what to do; infra/interop-stack.test.ts checks the sections exist.
 */
import { Annotations, Aws, Duration, Fn, NestedStack, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { Tables, type TableId } from '../lib/config/service';
import type { StageConfig } from './config';
import { PATIENT_READS_OVER_THRESHOLD_EVENT } from '../lib/disclosures/disclosure-recorder';

export interface AlarmsProps {
  config: StageConfig;
  key: kms.IKey;
  api: apigw.RestApi;
  /** function name (list name) -> function */
  functions: Record<string, lambda.IFunction>;
  /** names of the export and FHIR read functions (their disclosures are counted per partner and hour) */
  disclosingFunctions?: string[];
  /** names of the HTTP functions (the ones that answer 5xx themselves: the handled-5xx alarms) */
  httpFunctions: string[];
  authorizerName: string;
  /** label -> dead-letter queue */
  deadLetterQueues: Record<string, sqs.IQueue>;
  /** label -> source queue */
  sourceQueues: Record<string, sqs.IQueue>;
  /** table id -> table */
  tables: Record<string, dynamodb.ITable>;
  /** function name -> timeout in seconds (for the duration alarm) */
  timeoutSeconds: Record<string, number>;
  /** HTTP endpoints, for the dashboard's per-endpoint lines */
  endpoints: Array<{ name: string; method: string; path: string }>;
  /** name of the WAF web ACL (metric dimension WebACL) */
  webAclName: string;
  /** name of the AWS Backup vault of the tables (metric dimension BackupVaultName) */
  backupVaultName: string;
  /** the API's JSON access log (infra/partner-api.ts ACCESS_LOG_FORMAT: `status`, `errorType`) */
  accessLogs: logs.ILogGroup;
}

/** The runbook sections of infra/README.md ("Answer an alarm"), by alarm kind: heading text. */
export const RUNBOOK_SECTIONS = {
  dlq: 'Dead-lettered messages',
  queueAge: 'Queue backlog',
  api5xx: 'API 5XX rate',
  api4xx: 'API 4XX rate',
  api429: 'API 429 rate',
  quota: 'Usage-plan quota used up',
  latency: 'API latency p99',
  fnThrottles: 'Function throttles',
  fnErrors: 'Function errors',
  handled5xx: 'Handled 5XX of a function',
  fnDuration: 'Function duration near its timeout',
  tableThrottles: 'Table throttles',
  indexThrottles: 'Index throttles',
  kms: 'KMS request rate',
  waf: 'WAF blocked requests',
  backup: 'Backup jobs failed',
  patientReads: 'Distinct patients read by a partner',
} as const;
export type RunbookSection = keyof typeof RUNBOOK_SECTIONS;

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

export const RUNBOOK_FILE = 'infra/README.md';
/** the README section holding the runbook sections */
export const ANSWER_AN_ALARM = 'Answer an alarm';
/** ` Runbook: infra/README.md#<anchor>` appended to an alarm's description */
export function runbook(section: RunbookSection): string {
  return ` Runbook: ${RUNBOOK_FILE}#${headingAnchor(RUNBOOK_SECTIONS[section])}`;
}

/** p99 duration above this share of the timeout, for 3 periods of 5 minutes, alarms. */
export const DURATION_ALARM_SHARE_OF_TIMEOUT = 0.8;

export const QUEUE_MAX_AGE_SECONDS = 900;

export const API_5XX_RATE_PERCENT = 5;
export const API_5XX_MIN_REQUESTS = 20;

/** metrics the access-log metric filters publish (namespace `Interop/<prefix>`) */
export const API_429_METRIC = 'Api429Responses';
export const API_QUOTA_EXCEEDED_METRIC = 'ApiQuotaExceeded';

/**
 * Handled 5xx: an HTTP function that catches an error answers 500 (a bug) or 503 (a dependency
 * unavailable) itself, so Lambda counts a success and the function errors alarm stays quiet. Every
 * response writes one log line (lib/http/middleware/http-responses.ts, `request.completed`, ids and
 * status only); a metric filter on the function's log group counts those with status >= 500.
 * `LOG_LEVEL` must let `info` through (`-c logLevel=warn` or `error` would silence it; the stack warns).
 */
export const REQUEST_COMPLETED_EVENT = 'request.completed';
export const HANDLED_5XX_FILTER_PATTERN = `{ $.event = "${REQUEST_COMPLETED_EVENT}" && $.status >= 500 }`;
/** the metric of one function's handled 5xx responses (namespace `Interop/<prefix>`) */
export const handled5xxMetricName = (functionName: string) => `Handled5xx-${functionName}`;
/** handled 5xx responses of one function in 5 minutes above which its alarm fires */
export const HANDLED_5XX_ALARM_THRESHOLD = 0;

/**
 * Distinct patients per partner and hour: every export and FHIR read function writes a warning line
 * (lib/disclosures/disclosure-recorder.ts) with the partner's count once it is above the stage's
 * `patientReadsAlarmThreshold`; one metric filter per such function publishes `count` to one metric,
 * whose hourly Maximum above the threshold is the alarm. The line names the partner (ids and counts only).
 */
export const PATIENT_READS_METRIC = 'PatientReadsOverThreshold';
export const PATIENT_READS_FILTER_PATTERN = `{ $.event = "${PATIENT_READS_OVER_THRESHOLD_EVENT}" }`;

export class Alarms extends Construct {
  /** in the stage's stack */
  readonly topic: sns.Topic;
  /** the nested stack holding every alarm and the dashboard */
  readonly stack: NestedStack;
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const { prefix } = props.config;
    this.topic = new sns.Topic(this, 'Topic', { topicName: `${prefix}-alarms`, displayName: `${prefix} alarms`, masterKey: props.key, enforceSSL: true });
    // the TLS-only policy replaces SNS's default policy, so CloudWatch must be allowed explicitly:
    // only alarms of this account whose names carry this stage's prefix
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisStagePublish',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnLike: { 'aws:SourceArn': alarmArnPattern(prefix, this) },
        },
      }),
    );
    if (props.config.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.config.alarmEmail));
    const notify = new actions.SnsAction(this.topic);
    const add = (alarm: cloudwatch.Alarm) => alarm.addAlarmAction(notify);

    this.stack = new NestedStack(this, 'Stack', { description: `Alarms and operations dashboard of ${prefix}` });
    const inStack = this.stack;

    for (const [label, dlq] of Object.entries(props.deadLetterQueues)) {
      add(
        new cloudwatch.Alarm(inStack, `Dlq${label}`, {
          alarmName: `${prefix}-dlq-${label}`,
          alarmDescription: `Messages in the dead-letter queue ${label}: processing failed after every retry${runbook('dlq')}`,
          metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: cloudwatch.Stats.MAXIMUM }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    for (const [label, queue] of Object.entries(props.sourceQueues)) {
      add(
        new cloudwatch.Alarm(inStack, `QueueAge${label}`, {
          alarmName: `${prefix}-queue-age-${label}`,
          alarmDescription: `Oldest message in ${label} is older than ${QUEUE_MAX_AGE_SECONDS / 60} minutes: its consumer is stuck or missing${runbook('queueAge')}`,
          metric: queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
          threshold: QUEUE_MAX_AGE_SECONDS,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    const period = Duration.minutes(5);
    add(
      new cloudwatch.Alarm(inStack, 'Api5xxRate', {
        alarmName: `${prefix}-api-5xx-rate`,
        alarmDescription: `API 5XX responses above ${API_5XX_RATE_PERCENT}% (of at least ${API_5XX_MIN_REQUESTS} requests in 5 minutes)${runbook('api5xx')}`,
        metric: new cloudwatch.MathExpression({
          expression: `IF(requests >= ${API_5XX_MIN_REQUESTS}, 100 * errors / requests, 0)`,
          usingMetrics: {
            errors: props.api.metricServerError({ period, statistic: cloudwatch.Stats.SUM }),
            requests: props.api.metricCount({ period, statistic: cloudwatch.Stats.SUM }),
          },
          period,
          label: 'API 5XX %',
        }),
        threshold: API_5XX_RATE_PERCENT,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    for (const [name, fn] of Object.entries(props.functions)) {
      add(
        new cloudwatch.Alarm(inStack, `Throttles${name}`, {
          alarmName: `${prefix}-${name}-throttles`,
          alarmDescription: `Lambda ${name} was throttled${runbook('fnThrottles')}`,
          metric: fn.metricThrottles({ period, statistic: cloudwatch.Stats.SUM }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
      add(
        new cloudwatch.Alarm(inStack, `Errors${name}`, {
          alarmName: `${prefix}-${name}-errors`,
          alarmDescription:
            (name === props.authorizerName
              ? 'The authorizer failed (callers get 503 AUTHORIZER_FAILURE)'
              : `Lambda ${name} failed (an unhandled error or a timeout: callers got 5XX, or a batch/run will be retried)`) + runbook('fnErrors'),
          metric: fn.metricErrors({ period, statistic: cloudwatch.Stats.SUM }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
      const timeout = props.timeoutSeconds[name];
      if (!timeout) throw new Error(`no timeout known for function ${name}`);
      add(
        new cloudwatch.Alarm(inStack, `Duration${name}`, {
          alarmName: `${prefix}-${name}-duration-p99`,
          alarmDescription: `p99 duration of ${name} above ${DURATION_ALARM_SHARE_OF_TIMEOUT * 100}% of its ${timeout} s timeout for 15 minutes: it is about to time out${runbook('fnDuration')}`,
          metric: fn.metricDuration({ period, statistic: cloudwatch.Stats.p(99) }),
          threshold: Math.round(timeout * 1000 * DURATION_ALARM_SHARE_OF_TIMEOUT),
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 3,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    // handled 5xx of each HTTP function, counted from its request log line
    const namespace = `Interop/${prefix}`;
    if (props.config.logLevel === 'warn' || props.config.logLevel === 'error') {
      Annotations.of(this).addWarningV2(
        'interop:logLevelHidesRequests',
        `logLevel ${props.config.logLevel} drops the info-level request log line the handled-5xx alarms count: they cannot fire (use info or debug)`,
      );
    }
    for (const name of props.httpFunctions) {
      const fn = props.functions[name];
      if (!fn) throw new Error(`no function ${name} for the handled-5xx alarm`);
      // the function's own log group (infra/service-function.ts), named through the function so
      // that the filter is created after the function and its log group
      const logGroup = logs.LogGroup.fromLogGroupName(inStack, `FnLogs${name}`, Fn.join('', ['/aws/lambda/', fn.functionName]));
      const handled5xx = new logs.MetricFilter(inStack, `Handled5xxFilter${name}`, {
        logGroup,
        filterPattern: logs.FilterPattern.literal(HANDLED_5XX_FILTER_PATTERN),
        metricNamespace: namespace,
        metricName: handled5xxMetricName(name),
        metricValue: '1',
      }).metric({ period, statistic: cloudwatch.Stats.SUM });
      add(
        new cloudwatch.Alarm(inStack, `Handled5xx${name}`, {
          alarmName: `${prefix}-${name}-handled-5xx`,
          alarmDescription: `${name} answered 5XX itself (500: an unexpected error; 503: a dependency unavailable) although Lambda counted a success${runbook('handled5xx')}`,
          metric: handled5xx,
          threshold: HANDLED_5XX_ALARM_THRESHOLD,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    const patientReadFilters = (props.disclosingFunctions ?? []).map((name) => {
      const fn = props.functions[name];
      if (!fn) throw new Error(`no function ${name} for the patient-reads alarm`);
      return new logs.MetricFilter(inStack, `PatientReadsFilter${name}`, {
        logGroup: logs.LogGroup.fromLogGroupName(inStack, `FnReadLogs${name}`, Fn.join('', ['/aws/lambda/', fn.functionName])),
        filterPattern: logs.FilterPattern.literal(PATIENT_READS_FILTER_PATTERN),
        metricNamespace: namespace,
        metricName: PATIENT_READS_METRIC,
        metricValue: '$.count',
      });
    });
    if (patientReadFilters.length > 0) {
      add(
        new cloudwatch.Alarm(inStack, 'PatientReads', {
          alarmName: `${prefix}-patient-reads`,
          alarmDescription: `A partner's exports and FHIR reads reached more than ${props.config.patientReadsAlarmThreshold} distinct patients in one hour (log event ${PATIENT_READS_OVER_THRESHOLD_EVENT} names the partner)${runbook('patientReads')}`,
          metric: patientReadFilters[0]!.metric({ period: Duration.hours(1), statistic: cloudwatch.Stats.MAXIMUM }),
          threshold: props.config.patientReadsAlarmThreshold,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    for (const [id, table] of Object.entries(props.tables)) {
      add(
        new cloudwatch.Alarm(inStack, `TableThrottles${id}`, {
          alarmName: `${prefix}-table-${id}-throttles`,
          alarmDescription: `DynamoDB throttled reads or writes on table ${id} (on-demand limits or a hot partition)${runbook('tableThrottles')}`,
          metric: new cloudwatch.MathExpression({
            expression: 'reads + writes',
            usingMetrics: {
              reads: table.metric('ReadThrottleEvents', { period, statistic: cloudwatch.Stats.SUM }),
              writes: table.metric('WriteThrottleEvents', { period, statistic: cloudwatch.Stats.SUM }),
            },
            period,
            label: `${id} throttle events`,
          }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    add(
      new cloudwatch.Alarm(inStack, 'WafBlocked', {
        alarmName: `${prefix}-waf-blocked`,
        alarmDescription: `WAF blocked more than ${props.config.wafBlockedAlarmThreshold} requests in 5 minutes (an attack, or a partner stuck in a retry loop)${runbook('waf')}`,
        metric: wafBlockedRequests(props.webAclName, period),
        threshold: props.config.wafBlockedAlarmThreshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    // AWS Backup: a daily backup (or its copy) that failed, was aborted or expired before it ran.
    // Backup jobs report once a day, so the period is an hour and missing data is not a breach.
    const hour = Duration.hours(1);
    const backupJobs = (metricName: string) => backupMetric(metricName, props.backupVaultName, hour);
    add(
      new cloudwatch.Alarm(inStack, 'BackupJobsFailed', {
        alarmName: `${prefix}-backup-jobs-failed`,
        alarmDescription: `An AWS Backup job of the tables (vault ${prefix}-tables-*) failed, was aborted or expired, or a copy job failed: no recovery point of that day${runbook('backup')}`,
        metric: new cloudwatch.MathExpression({
          expression: 'failed + aborted + expired + copyFailed',
          usingMetrics: {
            failed: backupJobs('NumberOfBackupJobsFailed'),
            aborted: backupJobs('NumberOfBackupJobsAborted'),
            expired: backupJobs('NumberOfBackupJobsExpired'),
            copyFailed: backupJobs('NumberOfCopyJobsFailed'),
          },
          period: hour,
          label: 'failed backup and copy jobs',
        }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    // global secondary indexes: their throttle events carry the index's name and are not in the table's alarm
    for (const [id, table] of Object.entries(props.tables)) {
      for (const index of (Tables[id as TableId]?.indexes ?? []).filter((i) => i.kind === 'global')) {
        const dims = { TableName: table.tableName, GlobalSecondaryIndexName: index.name };
        add(
          new cloudwatch.Alarm(inStack, `IndexThrottles${id}${index.name}`, {
            alarmName: `${prefix}-table-${id}-${index.name}-throttles`,
            alarmDescription: `DynamoDB throttled reads or writes on index ${index.name} of table ${id} (a GSI write throttle also throttles the table's writes)${runbook('indexThrottles')}`,
            metric: new cloudwatch.MathExpression({
              expression: 'reads + writes',
              usingMetrics: {
                reads: table.metric('ReadThrottleEvents', { period, statistic: cloudwatch.Stats.SUM, dimensionsMap: dims }),
                writes: table.metric('WriteThrottleEvents', { period, statistic: cloudwatch.Stats.SUM, dimensionsMap: dims }),
              },
              period,
              label: `${id} ${index.name} throttle events`,
            }),
            threshold: 0,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
        );
      }
    }

    const { config } = props;
    add(
      new cloudwatch.Alarm(inStack, 'ApiLatencyP99', {
        alarmName: `${prefix}-api-latency-p99`,
        alarmDescription: `API p99 latency above ${config.apiLatencyP99AlarmMs} ms for 15 minutes${runbook('latency')}`,
        metric: props.api.metricLatency({ period, statistic: cloudwatch.Stats.p(99) }),
        threshold: config.apiLatencyP99AlarmMs,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    const requests = props.api.metricCount({ period, statistic: cloudwatch.Stats.SUM });
    const minRequests = config.apiAlarmMinRequests;
    add(
      new cloudwatch.Alarm(inStack, 'Api4xxRate', {
        alarmName: `${prefix}-api-4xx-rate`,
        alarmDescription: `API 4XX responses above ${config.api4xxAlarmRatePercent}% (of at least ${minRequests} requests in 5 minutes)${runbook('api4xx')}`,
        metric: new cloudwatch.MathExpression({
          expression: `IF(requests >= ${minRequests}, 100 * errors / requests, 0)`,
          usingMetrics: { errors: props.api.metricClientError({ period, statistic: cloudwatch.Stats.SUM }), requests },
          period,
          label: 'API 4XX %',
        }),
        threshold: config.api4xxAlarmRatePercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    // 429 and quota refusals: API Gateway publishes no metric of its own for either; the access log has both
    const logCount = (id: string, metricName: string, pattern: string) =>
      new logs.MetricFilter(inStack, id, {
        logGroup: props.accessLogs,
        filterPattern: logs.FilterPattern.literal(pattern),
        metricNamespace: namespace,
        metricName,
        metricValue: '1',
      }).metric({ period, statistic: cloudwatch.Stats.SUM });
    const tooMany = logCount('Api429Filter', API_429_METRIC, '{ $.status = "429" }');
    const quota = logCount('ApiQuotaExceededFilter', API_QUOTA_EXCEEDED_METRIC, '{ $.errorType = "QUOTA_EXCEEDED" }');
    add(
      new cloudwatch.Alarm(inStack, 'Api429Rate', {
        alarmName: `${prefix}-api-429-rate`,
        alarmDescription: `API 429 responses (stage, usage-plan, staff or anonymous throttles, the app's rate limits, quotas) above ${config.api429AlarmRatePercent}% (of at least ${minRequests} requests in 5 minutes)${runbook('api429')}`,
        metric: new cloudwatch.MathExpression({
          expression: `IF(requests >= ${minRequests}, 100 * FILL(throttled, 0) / requests, 0)`,
          usingMetrics: { throttled: tooMany, requests },
          period,
          label: 'API 429 %',
        }),
        threshold: config.api429AlarmRatePercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
    add(
      new cloudwatch.Alarm(inStack, 'ApiQuotaExceeded', {
        alarmName: `${prefix}-api-quota-exceeded`,
        alarmDescription: `A partner key's monthly usage-plan quota is used up: its requests get 429 until the month ends${runbook('quota')}`,
        metric: quota,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    add(
      new cloudwatch.Alarm(inStack, 'KmsRequestRate', {
        alarmName: `${prefix}-kms-request-rate`,
        alarmDescription: `KMS cryptographic requests of the account above ${config.kmsRequestsPerSecondAlarm}/s (5-minute average): near the request quota, past which KMS throttles every caller${runbook('kms')}`,
        metric: new cloudwatch.MathExpression({
          expression: `(FILL(gdk, 0) + FILL(dec, 0) + FILL(enc, 0)) / ${period.toSeconds()}`,
          usingMetrics: { gdk: kmsCalls('GenerateDataKey', period), dec: kmsCalls('Decrypt', period), enc: kmsCalls('Encrypt', period) },
          period,
          label: 'KMS requests/s',
        }),
        threshold: config.kmsRequestsPerSecondAlarm,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    this.dashboard = operationsDashboard(inStack, props);
  }
}

export function alarmArnPattern(prefix: string, scope: Construct): string {
  const stack = Stack.of(scope);
  return `arn:${Aws.PARTITION}:cloudwatch:${stack.region}:${stack.account}:alarm:${prefix}-*`;
}

function wafBlockedRequests(webAclName: string, period: Duration): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/WAFV2',
    metricName: 'BlockedRequests',
    dimensionsMap: { WebACL: webAclName, Region: Aws.REGION, Rule: 'ALL' },
    period,
    statistic: cloudwatch.Stats.SUM,
  });
}

/** AWS Backup job counts of one vault (namespace AWS/Backup, dimensions ResourceType and BackupVaultName). */
export function backupMetric(metricName: string, backupVaultName: string, period: Duration): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/Backup',
    metricName,
    dimensionsMap: { ResourceType: 'DynamoDB', BackupVaultName: backupVaultName },
    period,
    statistic: cloudwatch.Stats.SUM,
  });
}

/** KMS API calls of the account (AWS/Usage): the envelope encryption's cost and throttling driver. */
function kmsCalls(operation: string, period: Duration): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/Usage',
    metricName: 'CallCount',
    dimensionsMap: { Service: 'KMS', Type: 'API', Resource: operation, Class: 'None' },
    period,
    statistic: cloudwatch.Stats.SUM,
    label: `KMS ${operation}`,
  });
}

function operationsDashboard(scope: Construct, props: AlarmsProps): cloudwatch.Dashboard {
  const period = Duration.minutes(5);
  const { api } = props;
  const perEndpoint = (metricName: string, statistic: string) =>
    props.endpoints.map(
      (e) =>
        new cloudwatch.Metric({
          namespace: 'AWS/ApiGateway',
          metricName,
          dimensionsMap: { ApiName: api.restApiName, Stage: api.deploymentStage.stageName, Resource: e.path, Method: e.method },
          period,
          statistic,
          label: e.name,
        }),
    );
  const graph = (title: string, left: cloudwatch.IMetric[], width = 12) => new cloudwatch.GraphWidget({ title, left, width, height: 6 });
  const fns = Object.entries(props.functions);
  const dashboard = new cloudwatch.Dashboard(scope, 'Dashboard', { dashboardName: `${props.config.prefix}-operations`, defaultInterval: Duration.hours(6) });
  dashboard.addWidgets(
    new cloudwatch.TextWidget({
      markdown: `# ${props.config.prefix} operations\nAlarms go to SNS topic \`${props.config.prefix}-alarms\`. Runbook: [${RUNBOOK_FILE}#${headingAnchor(ANSWER_AN_ALARM)}](${RUNBOOK_FILE}#${headingAnchor(ANSWER_AN_ALARM)}) ("${ANSWER_AN_ALARM}"); each alarm's description names its section.`,
      width: 24,
      height: 2,
    }),
  );
  dashboard.addWidgets(
    graph('Requests by endpoint', perEndpoint('Count', cloudwatch.Stats.SUM)),
    graph('API latency p50 / p99 (ms)', [
      api.metricLatency({ period, statistic: cloudwatch.Stats.p(50), label: 'p50' }),
      api.metricLatency({ period, statistic: cloudwatch.Stats.p(99), label: 'p99' }),
    ]),
  );
  dashboard.addWidgets(
    graph('4XX by endpoint', perEndpoint('4XXError', cloudwatch.Stats.SUM)),
    graph('5XX by endpoint', perEndpoint('5XXError', cloudwatch.Stats.SUM)),
  );
  dashboard.addWidgets(
    graph(
      'Function duration p99 (ms)',
      fns.map(([name, fn]) => fn.metricDuration({ period, statistic: cloudwatch.Stats.p(99), label: name })),
    ),
    graph(
      'Function errors',
      fns.map(([name, fn]) => fn.metricErrors({ period, statistic: cloudwatch.Stats.SUM, label: name })),
    ),
  );
  dashboard.addWidgets(
    graph(
      'Handled 5XX by function (answered by the function itself)',
      props.httpFunctions.map(
        (name) =>
          new cloudwatch.Metric({
            namespace: `Interop/${props.config.prefix}`,
            metricName: handled5xxMetricName(name),
            period,
            statistic: cloudwatch.Stats.SUM,
            label: name,
          }),
      ),
      24,
    ),
  );
  dashboard.addWidgets(
    graph('Throttles: functions and tables', [
      ...fns.map(([name, fn]) => fn.metricThrottles({ period, statistic: cloudwatch.Stats.SUM, label: name })),
      ...Object.entries(props.tables).flatMap(([id, t]) => [
        t.metric('ReadThrottleEvents', { period, statistic: cloudwatch.Stats.SUM, label: `${id} read` }),
        t.metric('WriteThrottleEvents', { period, statistic: cloudwatch.Stats.SUM, label: `${id} write` }),
      ]),
    ]),
    graph('Queues: oldest message (s) and DLQ depth', [
      ...Object.entries(props.sourceQueues).map(([label, q]) =>
        q.metricApproximateAgeOfOldestMessage({ period, statistic: cloudwatch.Stats.MAXIMUM, label: `${label} age` }),
      ),
      ...Object.entries(props.deadLetterQueues).map(([label, q]) =>
        q.metricApproximateNumberOfMessagesVisible({ period, statistic: cloudwatch.Stats.MAXIMUM, label: `${label} DLQ` }),
      ),
    ]),
  );
  dashboard.addWidgets(
    graph(
      'KMS calls',
      ['GenerateDataKey', 'Decrypt', 'Encrypt'].map((op) => kmsCalls(op, period)),
    ),
    graph('WAF blocked requests', [wafBlockedRequests(props.webAclName, period)]),
  );
  return dashboard;
}
