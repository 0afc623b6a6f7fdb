/**
 * Turns a function's `needs` (lib/config/service.ts) into IAM statements: exactly the actions the
 * needs name, on exactly the resources they name. DynamoDB: per table, the operations listed
 * (`dynamodb:<op>` on the table ARN; `Query:<index>` as `dynamodb:Query` on that index's ARN only);
 * infra/least-privilege.test.ts compares them with each function's bundle. The CDK grant helpers are not used because they
 * add actions and wildcards we do not need (e.g. `kms:GenerateDataKey*`, `dynamodb:Scan`,
 * `dynamodb:DescribeTable`, unconditioned `kms:Decrypt` for every encrypted queue).
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  DynamoOperations,
  Tables,
  type Access,
  type DynamoOperation,
  type QueueId,
  type ResourceNeeds,
  type TableId,
  type TableOperation,
} from '../lib/config/service';

/** DynamoDB operations that only read (KMS via DynamoDB: Decrypt; the others also encrypt). */
export const DynamoReadOperations: readonly DynamoOperation[] = ['GetItem', 'BatchGetItem', 'Query', 'Scan'];
/**
 * What a function may send to an append-only table (Tables[id].appendOnly: the audit trail): a new
 * record, and reads of records (the reviewers' accounting of disclosures). Nothing that changes or
 * deletes a record once written.
 */
export const DynamoAppendOperations: readonly DynamoOperation[] = ['PutItem', 'GetItem', 'Query'];

/**
 * A table's declared operations split into the IAM actions on the table itself and, per index,
 * on the index (`Query:<index>`). Fails synthesis on an unknown operation or index, a query of a
 * retiring index without its replacement, a duplicate,
 * or anything but PutItem and reads on an append-only table.
 */
export function tableGrants(id: TableId, operations: readonly TableOperation[]): { table: DynamoOperation[]; indexes: Record<string, DynamoOperation[]> } {
  const table: DynamoOperation[] = [];
  const indexes: Record<string, DynamoOperation[]> = {};
  if (new Set(operations).size !== operations.length) throw new Error(`needs.tables.${id}: an operation is listed twice`);
  for (const op of operations) {
    const [name, index] = op.split(':') as [string, string | undefined];
    if (!(DynamoOperations as readonly string[]).includes(name)) throw new Error(`needs.tables.${id}: unknown DynamoDB operation ${op}`);
    if (Tables[id].appendOnly && !DynamoAppendOperations.includes(name as DynamoOperation))
      throw new Error(`needs.tables.${id}: the table is append-only, ${name} is not allowed`);
    if (index === undefined) table.push(name as DynamoOperation);
    else {
      if (name !== 'Query') throw new Error(`needs.tables.${id}: only Query names an index (${op})`);
      const declared = Tables[id].indexes.find((i) => i.name === index);
      if (!declared) throw new Error(`needs.tables.${id}: no index ${index} on the table`);
      if (declared.retiring && !operations.includes(`Query:${declared.retiring}`))
        throw new Error(
          `needs.tables.${id}: index ${index} is retiring: only a function that queries ${declared.retiring} may read it, while that one backfills (${op})`,
        );
      (indexes[index] ??= []).push('Query');
    }
  }
  return { table, indexes };
}
export const SqsSendActions = ['sqs:SendMessage'] as const;
export const SqsConsumeActions = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueAttributes'] as const;
export const S3ReadActions = ['s3:GetObject'] as const;
export const S3WriteActions = ['s3:PutObject'] as const;

/**
 * KMS use made *by a service on the function's behalf* (DynamoDB, SQS and S3 all encrypt with the
 * customer key). These statements carry `kms:ViaService`, so they cannot be used to call KMS
 * directly; direct KMS calls are exactly the `needs.kms` operations.
 */
const ViaServiceKms = {
  dynamodb: { read: ['kms:Decrypt', 'kms:DescribeKey'], write: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'] },
  sqs: { consume: ['kms:Decrypt'], send: ['kms:GenerateDataKey', 'kms:Decrypt'] },
  s3: { read: ['kms:Decrypt'], write: ['kms:GenerateDataKey', 'kms:Decrypt'] },
} as const;

export const reads = (access: Access | undefined) => access === 'read' || access === 'readwrite';
export const writes = (access: Access | undefined) => access === 'write' || access === 'readwrite';

export interface DataResources {
  key: kms.IKey;
  tables: Record<TableId, dynamodb.ITable>;
  queues: Record<QueueId, sqs.IQueue>;
  documentsBucket: s3.IBucket;
}

/**
 * The statements a function with these needs gets. `consumes` names the queue a queue-kind
 * background function is subscribed to (its event source mapping polls with the function's role);
 * `sendsToDeadLetterQueue` is set for functions with an async-invocation DLQ.
 */
export function statementsForNeeds(
  needs: ResourceNeeds,
  data: DataResources,
  options: { consumes?: QueueId; sendsToDeadLetterQueue?: boolean } = {},
): iam.PolicyStatement[] {
  const statements: iam.PolicyStatement[] = [];
  const viaService: Record<'dynamodb' | 'sqs' | 's3', Set<string>> = { dynamodb: new Set(), sqs: new Set(), s3: new Set() };

  for (const [id, operations] of Object.entries(needs.tables ?? {}) as Array<[TableId, TableOperation[]]>) {
    const table = data.tables[id];
    const grants = tableGrants(id, operations);
    const resources: Array<{ arn: string; actions: DynamoOperation[]; sid: string }> = [
      { arn: table.tableArn, actions: grants.table, sid: sid('Table', id) },
      ...Object.entries(grants.indexes).map(([index, actions]) => ({ arn: `${table.tableArn}/index/${index}`, actions, sid: sid('Index', `${id}-${index}`) })),
    ];
    if (!resources.some((r) => r.actions.length)) throw new Error(`needs.tables.${id}: no operation listed (remove the table instead)`);
    for (const r of resources) {
      if (r.actions.length) statements.push(new iam.PolicyStatement({ sid: r.sid, actions: r.actions.map((a) => `dynamodb:${a}`), resources: [r.arn] }));
    }
    const all = [...grants.table, ...Object.values(grants.indexes).flat()];
    const encrypts = all.some((op) => !DynamoReadOperations.includes(op));
    (encrypts ? ViaServiceKms.dynamodb.write : ViaServiceKms.dynamodb.read).forEach((a) => viaService.dynamodb.add(a));
  }

  const queueUses = new Map<QueueId, Set<'send' | 'consume'>>();
  for (const [id, use] of Object.entries(needs.queues ?? {}) as Array<[QueueId, 'send' | 'consume']>) queueUses.set(id, new Set([use]));
  if (options.consumes) queueUses.set(options.consumes, new Set([...(queueUses.get(options.consumes) ?? []), 'consume']));
  for (const [id, uses] of queueUses) {
    const queue = data.queues[id];
    if (uses.has('send')) {
      statements.push(new iam.PolicyStatement({ sid: sid('Send', id), actions: [...SqsSendActions], resources: [queue.queueArn] }));
      ViaServiceKms.sqs.send.forEach((a) => viaService.sqs.add(a));
    }
    if (uses.has('consume')) {
      // consumed through the Lambda event source mapping, which polls with the function's role
      statements.push(new iam.PolicyStatement({ sid: sid('Consume', id), actions: [...SqsConsumeActions], resources: [queue.queueArn] }));
      ViaServiceKms.sqs.consume.forEach((a) => viaService.sqs.add(a));
    }
  }

  // Lambda puts failed async events on the (KMS-encrypted) dead-letter queue with the function's
  // role; `sqs:SendMessage` on that queue is added by CDK with the DLQ itself
  if (options.sendsToDeadLetterQueue) ViaServiceKms.sqs.send.forEach((a) => viaService.sqs.add(a));

  const bucketAccess = needs.documentsBucket;
  if (bucketAccess) {
    // object-level only: the function reads and writes documents, it never lists or configures the bucket
    const objects = data.documentsBucket.arnForObjects('*');
    const actions = [...(reads(bucketAccess) ? S3ReadActions : []), ...(writes(bucketAccess) ? S3WriteActions : [])];
    statements.push(new iam.PolicyStatement({ sid: 'DocumentObjects', actions, resources: [objects] }));
    if (reads(bucketAccess)) ViaServiceKms.s3.read.forEach((a) => viaService.s3.add(a));
    if (writes(bucketAccess)) ViaServiceKms.s3.write.forEach((a) => viaService.s3.add(a));
  }

  const direct = [...new Set(needs.kms ?? [])];
  if (direct.length) {
    // envelope encryption (lib/crypto): the function itself calls GenerateDataKey / Decrypt /
    // Encrypt, only with the encryption-context purposes it handles
    const purposes = [...new Set(needs.kmsPurposes ?? [])].sort();
    if (!purposes.length)
      throw new Error(`needs.kms (${direct.join(', ')}) without needs.kmsPurposes: list the encryption-context purposes the function uses (KmsPurposes)`);
    statements.push(
      new iam.PolicyStatement({
        sid: 'EnvelopeKey',
        actions: direct.map((op) => `kms:${op}`),
        resources: [data.key.keyArn],
        conditions: { StringEquals: { 'kms:EncryptionContext:purpose': purposes } },
      }),
    );
  }

  const region = Stack.of(data.key).region;
  for (const service of ['dynamodb', 'sqs', 's3'] as const) {
    const actions = [...viaService[service]].sort();
    if (!actions.length) continue;
    statements.push(
      new iam.PolicyStatement({
        sid: sid('KeyVia', service),
        actions,
        resources: [data.key.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `${service}.${region}.amazonaws.com` } },
      }),
    );
  }
  return statements;
}

function sid(verb: string, id: string): string {
  return `${verb}${id.charAt(0).toUpperCase()}${id.slice(1)}`.replace(/[^A-Za-z0-9]/g, '');
}

/**
 * A Lambda execution role whose permissions live in one customer-managed policy instead of an
 * inline `DefaultPolicy` (HIPAA.Security-IAMNoInlinePolicy). Every `addToPrincipalPolicy` — ours
 * and the ones CDK makes internally (X-Ray tracing, the async dead-letter queue) — lands there.
 * No AWS managed policy is attached (not even AWSLambdaBasicExecutionRole: log permissions are
 * granted on the function's own log group only).
 */
export class FunctionRole extends iam.Role {
  readonly policy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: { roleName?: string; description: string }) {
    super(scope, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'), roleName: props.roleName, description: props.description });
    this.policy = new iam.ManagedPolicy(this, 'Policy', { description: `Least-privilege permissions of ${props.description}` });
    this.addManagedPolicy(this.policy);
  }

  override addToPrincipalPolicy(statement: iam.PolicyStatement): iam.AddToPrincipalPolicyResult {
    this.policy.addStatements(statement);
    return { statementAdded: true, policyDependable: this.policy };
  }
}
