/**
 * Alarms, all publishing to one KMS-encrypted SNS topic:
 * - every dead-letter queue: any message at all (depth > 0);
 * - every source queue: oldest message older than 15 minutes (consumer stuck, or none at all);
 * - the API: 5XX rate above 5 % of at least 20 requests in 5 minutes;
 * - every function: any throttle;
 * - the authorizer: any error (a failing authorizer answers every request 503).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageConfig } from './config';

export interface AlarmsProps {
  config: StageConfig;
  key: kms.IKey;
  api: apigw.RestApi;
  /** function name (list name) -> function */
  functions: Record<string, lambda.IFunction>;
  authorizerName: string;
  /** label -> dead-letter queue */
  deadLetterQueues: Record<string, sqs.IQueue>;
  /** label -> source queue */
  sourceQueues: Record<string, sqs.IQueue>;
}

export const QUEUE_MAX_AGE_SECONDS = 900;

export const API_5XX_RATE_PERCENT = 5;
export const API_5XX_MIN_REQUESTS = 20;

export class Alarms extends Construct {
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const { prefix } = props.config;
    this.topic = new sns.Topic(this, 'Topic', { topicName: `${prefix}-alarms`, displayName: `${prefix} alarms`, masterKey: props.key, enforceSSL: true });
    if (props.config.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.config.alarmEmail));
    const notify = new actions.SnsAction(this.topic);
    const add = (alarm: cloudwatch.Alarm) => alarm.addAlarmAction(notify);

    for (const [label, dlq] of Object.entries(props.deadLetterQueues)) {
      add(
        new cloudwatch.Alarm(this, `Dlq${label}`, {
          alarmName: `${prefix}-dlq-${label}`,
          alarmDescription: `Messages in the dead-letter queue ${label}: processing failed after every retry`,
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
        new cloudwatch.Alarm(this, `QueueAge${label}`, {
          alarmName: `${prefix}-queue-age-${label}`,
          alarmDescription: `Oldest message in ${label} is older than ${QUEUE_MAX_AGE_SECONDS / 60} minutes: its consumer is stuck or missing`,
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
      new cloudwatch.Alarm(this, 'Api5xxRate', {
        alarmName: `${prefix}-api-5xx-rate`,
        alarmDescription: `API 5XX responses above ${API_5XX_RATE_PERCENT}% (of at least ${API_5XX_MIN_REQUESTS} requests in 5 minutes)`,
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
        new cloudwatch.Alarm(this, `Throttles${name}`, {
          alarmName: `${prefix}-${name}-throttles`,
          alarmDescription: `Lambda ${name} was throttled`,
          metric: fn.metricThrottles({ period, statistic: cloudwatch.Stats.SUM }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    const authorizer = props.functions[props.authorizerName];
    if (!authorizer) throw new Error(`authorizer ${props.authorizerName} is not among the functions`);
    add(
      new cloudwatch.Alarm(this, 'AuthorizerErrors', {
        alarmName: `${prefix}-authorizer-errors`,
        alarmDescription: 'The authorizer failed (callers get 503 AUTHORIZER_FAILURE)',
        metric: authorizer.metricErrors({ period, statistic: cloudwatch.Stats.SUM }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
}
