/**
 * The customer-managed key and everything it protects: the tables (from `Tables`), the queues and
 * their dead-letter queues (from `Queues`), the documents bucket and its access-log bucket, and
 * the AWS Backup plan for the tables.
 */
import { Aws, Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as backup from 'aws-cdk-lib/aws-backup';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { Queues, Tables, resourceName, type BackgroundFunction, type QueueId, type TableId } from '../lib/config/service';
import type { StageConfig } from './config';
import { acknowledge } from './nag';

export const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** AWS guidance for an SQS event source: the queue's visibility timeout is at least 6x the consumer function's timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/**
 * Visibility timeout of each queue in the cloud: the list's value (lib/config/service.ts, also used
 * by the local stack), raised to VISIBILITY_TIMEOUT_FACTOR x the timeout of the queue's consumer.
 * With less, a batch whose invocation is retried after a throttle or a slow start becomes visible
 * again while it is still being processed, is received twice and burns its receive count.
 */
export function queueVisibilityTimeouts(background: BackgroundFunction[]): Record<QueueId, number> {
  const result = Object.fromEntries(Object.values(Queues).map((def) => [def.id, def.visibilityTimeoutSeconds])) as Record<QueueId, number>;
  for (const b of background) {
    if (b.kind === 'queue' && b.queue) result[b.queue] = Math.max(result[b.queue], VISIBILITY_TIMEOUT_FACTOR * b.timeoutSeconds);
  }
  return result;
}

export class DataStores extends Construct {
  readonly key: kms.Key;
  readonly tables = {} as Record<TableId, dynamodb.Table>;
  readonly queues = {} as Record<QueueId, sqs.Queue>;
  readonly deadLetterQueues = {} as Record<QueueId, sqs.Queue>;
  readonly documentsBucket: s3.Bucket;
  readonly accessLogsBucket: s3.Bucket;
  readonly backupVault: backup.BackupVault;
  readonly backupPlan: backup.BackupPlan;

  /** `visibilityTimeouts`: seconds per queue (queueVisibilityTimeouts); default the list's values */
  constructor(scope: Construct, id: string, config: StageConfig, visibilityTimeouts: Record<QueueId, number> = queueVisibilityTimeouts([])) {
    super(scope, id);
    const { prefix, retainData } = config;
    const removalPolicy = retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    // ---- the one customer-managed key ------------------------------------------------------
    this.key = new kms.Key(this, 'Key', {
      alias: `alias/${prefix}`,
      description: `${prefix}: envelope encryption of PHI and encryption at rest of every table, queue, bucket, log group and topic`,
      enableKeyRotation: true,
      removalPolicy,
      pendingWindow: Duration.days(retainData ? 30 : 7),
    });
    const logGroupArn = (name: string) => `arn:${Aws.PARTITION}:logs:${Stack.of(this).region}:${Stack.of(this).account}:log-group:${name}`;
    // CloudWatch Logs encrypts the stack's log groups (and only those) with the key
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchLogsForThisServicesLogGroups',
        principals: [new iam.ServicePrincipal(`logs.${Stack.of(this).region}.amazonaws.com`)],
        actions: [
          'kms:Encrypt',
          'kms:Decrypt',
          'kms:ReEncryptFrom',
          'kms:ReEncryptTo',
          'kms:GenerateDataKey',
          'kms:GenerateDataKeyWithoutPlaintext',
          'kms:DescribeKey',
        ],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': [
              logGroupArn(`/aws/lambda/${prefix}-*`),
              logGroupArn(`/aws/apigateway/${prefix}-*`),
              logGroupArn('API-Gateway-Execution-Logs_*'),
              logGroupArn(`aws-waf-logs-${prefix}*`),
            ],
          },
        },
      }),
    );
    // CloudWatch alarms publish to the KMS-encrypted alarm topic
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublishToEncryptedTopic',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: ['*'],
        // the same alarms the topic policy admits: this account, this stage's alarm names
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Stack.of(this).region}:${Stack.of(this).account}:alarm:${prefix}-*` },
        },
      }),
    );

    // ---- tables ------------------------------------------------------------------------------
    for (const def of Object.values(Tables)) {
      const table = new dynamodb.Table(this, `Table${pascal(def.id)}`, {
        tableName: resourceName(prefix, def.baseName),
        partitionKey: { name: def.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: def.sortKey ? { name: def.sortKey, type: dynamodb.AttributeType.STRING } : undefined,
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
        encryptionKey: this.key,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true, recoveryPeriodInDays: 35 },
        timeToLiveAttribute: def.ttlAttribute,
        deletionProtection: retainData,
        removalPolicy,
      });
      for (const index of def.indexes) {
        if (index.kind === 'local') {
          table.addLocalSecondaryIndex({
            indexName: index.name,
            sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
            ...(index.include
              ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }
              : { projectionType: dynamodb.ProjectionType.ALL }),
          });
        } else {
          if (!index.partitionKey) throw new Error(`global index ${def.id}.${index.name} has no partitionKey`);
          table.addGlobalSecondaryIndex({
            indexName: index.name,
            partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
            sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
            ...(index.include
              ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }
              : { projectionType: dynamodb.ProjectionType.ALL }),
          });
        }
      }
      this.tables[def.id] = table;
    }

    // ---- queues, each with its dead-letter queue ----------------------------------------------
    for (const def of Object.values(Queues)) {
      const name = resourceName(prefix, def.baseName);
      const dlq = new sqs.Queue(this, `Queue${pascal(def.id)}Dlq`, {
        queueName: `${name}-dlq`,
        encryption: sqs.QueueEncryption.KMS,
        encryptionMasterKey: this.key,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
        removalPolicy,
      });
      this.deadLetterQueues[def.id] = dlq;
      this.queues[def.id] = new sqs.Queue(this, `Queue${pascal(def.id)}`, {
        queueName: name,
        visibilityTimeout: Duration.seconds(visibilityTimeouts[def.id]),
        encryption: sqs.QueueEncryption.KMS,
        encryptionMasterKey: this.key,
        enforceSSL: true,
        retentionPeriod: Duration.days(4),
        deadLetterQueue: { queue: dlq, maxReceiveCount: def.maxReceiveCount },
        removalPolicy,
      });
    }

    // ---- documents bucket and its server access log bucket -------------------------------------
    // Buckets are always retained (documents are records; the log bucket is their audit trail) and
    // named by CloudFormation (`interop-<stage>-...-<suffix>`) so a dev stack can be re-created
    // after a destroy while the old buckets still exist.
    this.accessLogsBucket = new s3.Bucket(this, 'AccessLogsBucket', {
      // S3 server access logging delivers only to SSE-S3 buckets (SSE-KMS targets are not supported)
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: true,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(retainData ? 2557 : 90), noncurrentVersionExpiration: Duration.days(30) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.accessLogsBucket,
      'HIPAA.Security-S3DefaultEncryptionKMS',
      'S3 server access log delivery supports only SSE-S3 on the target bucket; the logs hold request metadata (no document content) and the bucket is private, versioned and TLS-only.',
    );
    acknowledge(
      this.accessLogsBucket,
      'HIPAA.Security-S3BucketReplicationEnabled',
      'Access logs are an operational audit aid kept in-region with versioning; cross-region replication of them is not part of this single-region service design.',
    );

    this.documentsBucket = new s3.Bucket(this, 'DocumentsBucket', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: this.key,
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: true,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'documents/',
      lifecycleRules: [{ id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.documentsBucket,
      'HIPAA.Security-S3BucketReplicationEnabled',
      'Single-region service: documents are protected by versioning, SSE-KMS with the customer key and retention on stack deletion; a replica region (and its key) is a separate DR decision not made here.',
    );

    // ---- AWS Backup for the tables (on top of 35-day PITR) --------------------------------------
    const vault = (this.backupVault = new backup.BackupVault(this, 'BackupVault', {
      // retained, so its name must not collide when the stack is created again after a destroy:
      // the suffix is the first block of the stack's id, new for every creation, stable on update
      backupVaultName: `${prefix}-tables-${Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID))))}`,
      encryptionKey: this.key,
      // recovery points must outlive the stack; a vault holding them cannot be deleted anyway
      removalPolicy: RemovalPolicy.RETAIN,
      // vault lock: no one deletes a recovery point before its retention is over (governance mode;
      // compliance mode, immutable after the grace period, with -c backupVaultLockChangeableForDays)
      lockConfiguration: config.backupVaultLock
        ? {
            minRetention: Duration.days(config.backupRetentionDays),
            changeableFor: config.backupVaultLockChangeableForDays === undefined ? undefined : Duration.days(config.backupVaultLockChangeableForDays),
          }
        : undefined,
    }));
    // optional copy of every backup to a vault in another region or account (its own key there)
    const copyVault = config.backupCopyVaultArn ? backup.BackupVault.fromBackupVaultArn(this, 'BackupCopyVault', config.backupCopyVaultArn) : undefined;
    const plan = (this.backupPlan = new backup.BackupPlan(this, 'BackupPlan', {
      backupPlanName: `${prefix}-tables`,
      backupVault: vault,
      backupPlanRules: [
        new backup.BackupPlanRule({
          ruleName: 'Daily',
          scheduleExpression: events.Schedule.cron({ hour: '5', minute: '0' }),
          deleteAfter: Duration.days(config.backupRetentionDays),
          copyActions: copyVault ? [{ destinationBackupVault: copyVault, deleteAfter: Duration.days(config.backupCopyRetentionDays) }] : undefined,
        }),
      ],
    }));
    const selection = plan.addSelection('Tables', {
      resources: Object.values(this.tables).map((table) => backup.BackupResource.fromDynamoDbTable(table)),
      allowRestores: false,
    });
    const backupRole = selection.node.tryFindChild('Role');
    if (backupRole) {
      acknowledge(
        backupRole,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
        'The role AWS Backup assumes to snapshot the tables; AWSBackupServiceRolePolicyForBackup is the AWS-maintained policy for that service role and tracks new resource types.',
      );
    }
  }
}
