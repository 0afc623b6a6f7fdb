/* eslint-disable @typescript-eslint/no-explicit-any -- the synthesised CloudFormation template is untyped JSON */
/**
 * The deployed stack, synthesized ONCE (with real esbuild bundling of every function) and checked
 * against lib/config/service.ts: functions, least privilege, encryption, tables, queues, API,
 * alarms, outputs, and cdk-nag (AwsSolutions + HIPAA Security) with zero unacknowledged findings.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { pathToFileURL } from 'node:url';
import * as path from 'node:path';
import { CfnElement, CfnResource, Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import {
  allowedMethods,
  AuthorizerFunction,
  BackgroundFunctions,
  Env,
  BundledFiles,
  HttpEndpoints,
  KmsPurposes,
  Queues,
  STAFF_SIGN_IN_ENV,
  Tables,
  type QueueId,
  type ResourceNeeds,
  type TableId,
} from '../lib/config/service';
import { createTableInput } from '../lib/local/dynamo-tables';
import { PARTNER_TIERS } from '../lib/keys/api-key';
import { encodeDecision } from '../lib/keys/authorizer-context';
import { usagePlanParameterName } from '../lib/config/stage-parameters';
import { AnonymousTier, PartnerTiers, anonymousUsageIdentifier } from './config';
import { pascal, queueVisibilityTimeouts } from './data-stores';
import { STAFF_USAGE_IDENTIFIER_ENV } from '../lib/keys/access-wiring';
import { SqsConsumeActions, SqsSendActions, tableGrants } from './least-privilege';
import { nagPacks } from './nag';
import { ACCESS_LOG_FORMAT } from './partner-api';
import { ANSWER_AN_ALARM, headingAnchor } from './alarms';
import { ESM_REQUIRE_BANNER, REPO_ROOT, assertBundledFilesExist } from './service-function';
import { asArray, refOf, refsIn, removeAssembly, resourcesOfType, synthesize, type CfnResourceJson, type Synthesized } from './testing';

let s: Synthesized;
beforeAll(() => {
  s = synthesize();
}, 180_000);
afterAll(() => removeAssembly(s));

const PREFIX = 'interop-dev';
const allFunctions: Array<{
  name: string;
  kind: 'http' | 'authorizer' | 'queue' | 'schedule';
  needs: ResourceNeeds;
  memoryMb: number;
  timeoutSeconds: number;
  queue?: QueueId;
  schedule?: string;
  staffSignIn?: true;
}> = [...HttpEndpoints.map((e) => ({ ...e, kind: 'http' as const })), { ...AuthorizerFunction, kind: 'authorizer' as const }, ...BackgroundFunctions];

const logicalId = (construct: { node: { defaultChild?: unknown } } | CfnElement) =>
  s.stack.getLogicalId((construct instanceof CfnElement ? construct : construct.node.defaultChild) as CfnElement);
const fnId = (name: string) => logicalId(s.stack.functions[name]!.fn);
const tableId = (id: TableId) => logicalId(s.stack.data.tables[id]);
const queueId = (id: QueueId) => logicalId(s.stack.data.queues[id]);
const keyId = () => logicalId(s.stack.data.key);
const resource = (id: string): CfnResourceJson => s.json.Resources[id]!;

/** The statements of the customer-managed policy attached to a function's role. */
function functionStatements(name: string): any[] {
  const policyId = logicalId(s.stack.functions[name]!.role.policy);
  return asArray(resource(policyId).Properties!.PolicyDocument.Statement);
}

describe('functions', () => {
  test('one Lambda function per entry of the lists, and no other', () => {
    expect(resourcesOfType(s.json, 'AWS::Lambda::Function')).toHaveLength(allFunctions.length);
  });

  test.each(allFunctions.map((f) => [f.name, f] as const))('%s: handler, runtime, sizing, tracing, logs', (name, f) => {
    const props = resource(fnId(name)).Properties!;
    expect(props).toMatchObject({
      FunctionName: `${PREFIX}-${name}`,
      Handler: 'index.handler',
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: f.memoryMb,
      Timeout: f.timeoutSeconds,
      TracingConfig: { Mode: 'Active' },
    });
    const logGroup = resource(refOf(props.LoggingConfig.LogGroup)!);
    expect(logGroup.Properties).toMatchObject({ LogGroupName: `/aws/lambda/${PREFIX}-${name}`, RetentionInDays: 30 });
    expect(refOf(logGroup.Properties!.KmsKeyId)).toBe(keyId());
  });

  test.each(allFunctions.map((f) => [f.name, f] as const))('%s: environment variables named by Env, for exactly what it needs', (name, f) => {
    const vars: Record<string, unknown> = resource(fnId(name)).Properties!.Environment.Variables;
    const expected = new Set<string>([Env.stage, Env.logLevel, 'NODE_OPTIONS']);
    const tables = Object.keys(f.needs.tables ?? {}) as TableId[];
    const queues = new Set([...(Object.keys(f.needs.queues ?? {}) as QueueId[]), ...(f.queue ? [f.queue] : [])]);
    tables.forEach((t) => expected.add(Tables[t].env));
    queues.forEach((q) => expected.add(Queues[q].env));
    if (f.needs.kms?.length) expected.add(Env.kmsKeyId);
    if (f.needs.documentsBucket) expected.add(Env.documentsBucket);
    if (f.kind === 'authorizer')
      [Env.anonRateLimit, Env.anonRateWindowSeconds, Env.anonUsageIdentifier, STAFF_USAGE_IDENTIFIER_ENV].forEach((v) => expected.add(v));
    else
      [Env.hl7SendingApplication, Env.hl7SendingFacility, Env.hl7IdentifierNamespace, Env.chartAssigningAuthority, Env.hl7AcceptProcessingIds].forEach((v) =>
        expected.add(v),
      );
    if (f.kind === 'authorizer' || f.staffSignIn) STAFF_SIGN_IN_ENV.forEach((v) => expected.add(v));
    // a function that counts the distinct patients a partner reads (the rate-limit table) knows when to raise the alarm line
    if (f.needs.tables?.rateLimit && f.kind !== 'authorizer') expected.add(Env.patientReadsAlarmThreshold);
    expect(new Set(Object.keys(vars))).toEqual(expected);
    // values point at the right resources
    for (const t of tables) expect(refOf(vars[Tables[t].env])).toBe(tableId(t));
    for (const q of queues) expect(refOf(vars[Queues[q].env])).toBe(queueId(q));
    if (f.needs.kms?.length) expect(refOf(vars[Env.kmsKeyId])).toBe(keyId());
    expect(vars[Env.stage]).toBe('dev');
  });

  test('the authorizer meters unauthenticated callers against the anonymous plan key', () => {
    const vars = resource(fnId(AuthorizerFunction.name)).Properties!.Environment.Variables;
    const [, apiKey] = resourcesOfType(s.json, 'AWS::ApiGateway::ApiKey')[0]!;
    expect(vars[Env.anonUsageIdentifier]).toBe(anonymousUsageIdentifier(PREFIX));
    expect(apiKey.Properties!.Value).toBe(vars[Env.anonUsageIdentifier]);
  });

  test('every function is bundled locally: one minified ESM file with the createRequire banner, a source map, the AWS SDK inside', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(s.outdir, `${PREFIX}.assets.json`), 'utf8'));
    for (const { name } of allFunctions) {
      const code = resource(fnId(name)).Properties!.Code;
      const hash = String(code.S3Key).replace(/\.zip$/, '');
      const dir = path.join(s.outdir, manifest.files[hash].source.path);
      const bundle = fs.readFileSync(path.join(dir, 'index.mjs'), 'utf8');
      expect(bundle.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
      expect(fs.existsSync(path.join(dir, 'index.mjs.map'))).toBe(true);
      // the map is beside the bundle, linked; the bundle does not carry it (it would double the code a cold start loads)
      expect(bundle.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(true);
      expect(bundle).not.toContain('sourceMappingURL=data:');
      expect(bundle).not.toMatch(/from\s*["']@aws-sdk\//); // nothing left to resolve at runtime
      expect(bundle).not.toMatch(/(?<![[\w])require\(["']@aws-sdk\//); // (one SDK error message quotes "[require(...)]")
      expect(bundle.split('\n').length).toBeLessThan(200); // minified
    }
    // the authorizer talks to DynamoDB: the client is in its bundle
    const authorizerCode = resource(fnId(AuthorizerFunction.name)).Properties!.Code;
    const authorizerDir = path.join(s.outdir, manifest.files[String(authorizerCode.S3Key).replace(/\.zip$/, '')].source.path);
    expect(fs.readFileSync(path.join(authorizerDir, 'index.mjs'), 'utf8')).toContain('DynamoDB');
  });

  test('queue functions: SQS event source with partial batch failures and a concurrency cap', () => {
    for (const f of BackgroundFunctions.filter((b) => b.kind === 'queue')) {
      s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: fnId(f.name) },
        EventSourceArn: { 'Fn::GetAtt': [queueId(f.queue!), 'Arn'] },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: Match.anyValue() },
      });
      const props = resource(fnId(f.name)).Properties!;
      // dev: no reserved concurrency (a new account's quota of 10 cannot spare it); prod: see stages-and-lists.test.ts
      expect(props.ReservedConcurrentExecutions).toBeUndefined();
      expect(f.timeoutSeconds).toBeLessThanOrEqual(Queues[f.queue!].visibilityTimeoutSeconds);
    }
  });

  test('schedule functions: EventBridge rule with the schedule, retries, a dead-letter queue (concurrency 1 outside dev)', () => {
    for (const f of BackgroundFunctions.filter((b) => b.kind === 'schedule')) {
      s.template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: f.schedule,
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [fnId(f.name), 'Arn'] } })],
      });
      const props = resource(fnId(f.name)).Properties!;
      expect(props.ReservedConcurrentExecutions).toBeUndefined();
      const dlq = resource(refOf(props.DeadLetterConfig.TargetArn)!);
      expect(dlq.Type).toBe('AWS::SQS::Queue');
      expect(refOf(dlq.Properties!.KmsMasterKeyId)).toBe(keyId());
    }
  });
});

describe('least privilege', () => {
  const identityPolicies = () => [
    ...resourcesOfType(s.json, 'AWS::IAM::ManagedPolicy').map(([id, r]) => [id, r.Properties!.PolicyDocument] as const),
    ...resourcesOfType(s.json, 'AWS::IAM::Policy').map(([id, r]) => [id, r.Properties!.PolicyDocument] as const),
    ...resourcesOfType(s.json, 'AWS::IAM::Role').flatMap(([id, r]) => asArray<any>(r.Properties!.Policies).map((p) => [id, p.PolicyDocument] as const)),
  ];
  const resourcePolicies = () =>
    [
      ...resourcesOfType(s.json, 'AWS::S3::BucketPolicy'),
      ...resourcesOfType(s.json, 'AWS::SQS::QueuePolicy'),
      ...resourcesOfType(s.json, 'AWS::SNS::TopicPolicy'),
      ...resourcesOfType(s.json, 'AWS::KMS::Key'),
    ].map(([id, r]) => [id, r.Properties!.PolicyDocument ?? r.Properties!.KeyPolicy] as const);
  const wildcardStrings = (value: unknown): string[] => JSON.stringify(value).match(/"[^"]*\*[^"]*"/g) ?? [];

  test('no inline policies at all (customer-managed policies only)', () => {
    expect(resourcesOfType(s.json, 'AWS::IAM::Policy')).toEqual([]);
    for (const [, role] of resourcesOfType(s.json, 'AWS::IAM::Role')) expect(role.Properties!.Policies).toBeUndefined();
  });

  test('no Allow statement in any policy document grants Action "*" or "service:*"', () => {
    const docs = [...identityPolicies(), ...resourcePolicies()];
    expect(docs.length).toBeGreaterThan(allFunctions.length);
    for (const [id, doc] of docs) {
      for (const st of asArray<any>(doc.Statement)) {
        // Deny statements may be broad on purpose (e.g. deny s3:* without TLS)
        if (st.Effect !== 'Allow') continue;
        for (const action of asArray<string>(st.Action)) {
          if (id === keyId() && action === 'kms:*') {
            // the default key-policy statement that lets IAM policies of this account grant use of the key
            expect(st.Principal).toEqual({ AWS: 'arn:aws:iam::123456789012:root' });
            continue;
          }
          expect({ id, action }).not.toEqual({ id, action: '*' });
          expect({ id, action }).not.toEqual({ id, action: expect.stringMatching(/^[a-z0-9-]+:\*$/) });
        }
        expect(st.NotAction).toBeUndefined();
        expect(st.NotResource).toBeUndefined();
      }
    }
  });

  test('identity policies use a wildcard resource only where the API has no resource-level permission (X-Ray), for object keys of the documents bucket, or for API keys to delete (revokeExpiredKeys)', () => {
    const bucket = logicalId(s.stack.data.documentsBucket);
    for (const [id, doc] of identityPolicies()) {
      for (const st of asArray<any>(doc.Statement)) {
        const wildcards = wildcardStrings(st.Resource);
        if (wildcards.length === 0) continue;
        const actions = asArray<string>(st.Action);
        if (JSON.stringify(st.Resource) === '"*"') {
          for (const a of actions) expect({ id, a }).toEqual({ id, a: expect.stringMatching(/^xray:Put(TraceSegments|TelemetryRecords)$/) });
        } else if (JSON.stringify(st.Resource).includes(bucket)) {
          expect(st.Resource).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, '/*']] });
          for (const a of actions) expect(['s3:GetObject', 's3:PutObject']).toContain(a);
        } else if (/:apigateway:[^:]+::\/apikeys\/\*"?$/.test(JSON.stringify(st.Resource).replace(/"\]\]\}$/, ''))) {
          // API key ids are made when each partner key is issued: DELETE on /apikeys/{id} only
          expect({ id, actions }).toEqual({ id, actions: ['apigateway:DELETE'] });
        } else if (id.includes('BackupPlan') || id.includes('CloudWatchRole')) {
          // AWS-managed service roles only (no wildcard statements of ours there)
          throw new Error(`unexpected wildcard statement in ${id}`);
        } else {
          throw new Error(`unexpected wildcard resource in ${id}: ${JSON.stringify(st)}`);
        }
      }
    }
  });

  test('resource policies never Allow an anonymous principal', () => {
    for (const [id, doc] of resourcePolicies()) {
      for (const st of asArray<any>(doc.Statement)) {
        if (st.Effect !== 'Allow') continue;
        expect({ id, principal: st.Principal }).not.toEqual({ id, principal: '*' });
        expect({ id, principal: st.Principal }).not.toEqual({ id, principal: { AWS: '*' } });
      }
    }
  });

  test.each(allFunctions.map((f) => [f.name, f] as const))('%s: exactly the actions its needs name, on exactly those resources', (name, f) => {
    const statements = functionStatements(name);
    const byResource = new Map<string, Set<string>>();
    const direct: Array<{ actions: string[]; conditioned: boolean; resource: unknown; condition?: any }> = [];
    for (const st of statements) {
      expect(st.Effect).toBe('Allow');
      const actions = asArray<string>(st.Action);
      for (const r of asArray<unknown>(st.Resource)) {
        const key = JSON.stringify(r);
        byResource.set(key, new Set([...(byResource.get(key) ?? []), ...actions]));
      }
      if (actions.some((a) => a.startsWith('kms:')))
        direct.push({ actions, conditioned: Boolean(st.Condition?.StringEquals?.['kms:ViaService']), resource: st.Resource, condition: st.Condition });
    }
    const actionsOn = (r: unknown) => [...(byResource.get(JSON.stringify(r)) ?? [])].sort();

    // tables: exactly the declared operations; an index only for a declared `Query:<index>`
    // (that these match the bundle is infra/least-privilege.test.ts)
    for (const id of Object.keys(Tables) as TableId[]) {
      const ops = f.needs.tables?.[id] ?? [];
      const arn = { 'Fn::GetAtt': [tableId(id), 'Arn'] };
      const expected = ops
        .filter((op) => !op.includes(':'))
        .map((op) => `dynamodb:${op}`)
        .sort();
      expect({ table: id, actions: actionsOn(arn) }).toEqual({ table: id, actions: expected });
      for (const index of Tables[id].indexes) {
        const indexArn = { 'Fn::Join': ['', [arn, `/index/${index.name}`]] };
        const queried = ops.includes(`Query:${index.name}`);
        expect({ index: index.name, actions: actionsOn(indexArn) }).toEqual({ index: index.name, actions: queried ? ['dynamodb:Query'] : [] });
      }
    }
    // queues
    for (const id of Object.keys(Queues) as QueueId[]) {
      const uses = new Set([f.needs.queues?.[id], f.queue === id ? 'consume' : undefined].filter(Boolean));
      const expected = [...(uses.has('send') ? SqsSendActions : []), ...(uses.has('consume') ? SqsConsumeActions : [])].sort();
      expect({ queue: id, actions: actionsOn({ 'Fn::GetAtt': [queueId(id), 'Arn'] }) }).toEqual({ queue: id, actions: expected });
    }
    // KMS: called directly for exactly the listed operations, only with the function's
    // encryption-context purposes; everything else only via a service
    const directUse = direct.filter((d) => !d.conditioned);
    expect(directUse.flatMap((d) => d.actions).sort()).toEqual((f.needs.kms ?? []).map((op) => `kms:${op}`).sort());
    for (const d of directUse) expect(d.condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': [...(f.needs.kmsPurposes ?? [])].sort() } });
    for (const d of direct) expect(refOf(d.resource)).toBe(keyId());
    for (const st of statements.filter((x) => x.Condition)) {
      expect(Object.keys(st.Condition)).toEqual(['StringEquals']);
      expect(Object.keys(st.Condition.StringEquals)).toEqual([
        asArray<string>(st.Action).every((a) => a.startsWith('kms:')) && st.Sid === 'EnvelopeKey' ? 'kms:EncryptionContext:purpose' : 'kms:ViaService',
      ]);
    }
    // documents bucket: objects only
    const bucket = logicalId(s.stack.data.documentsBucket);
    const bucketStatements = statements.filter((st) => JSON.stringify(st.Resource).includes(bucket));
    if (!f.needs.documentsBucket) expect(bucketStatements).toEqual([]);
    else
      expect(bucketStatements.flatMap((st) => asArray<string>(st.Action)).sort()).toEqual(
        ['s3:GetObject', 's3:PutObject'].filter((a) => (a === 's3:GetObject' ? f.needs.documentsBucket !== 'write' : f.needs.documentsBucket !== 'read')),
      );
    // logs: its own log group only
    const logGroup = refOf(resource(fnId(name)).Properties!.LoggingConfig.LogGroup)!;
    const logStatements = statements.filter((st) => asArray<string>(st.Action).some((a) => a.startsWith('logs:')));
    expect(logStatements).toEqual([{ Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [logGroup, 'Arn'] } }]);
    // API Gateway: only for needs.apiGatewayKeys (find keys by name, delete one), nothing else of API Gateway
    const apiGateway = statements
      .filter((st) => asArray<string>(st.Action).some((a) => a.startsWith('apigateway:')))
      .map((st) => ({ actions: asArray<string>(st.Action), resource: JSON.stringify(st.Resource) }));
    if (!f.needs.apiGatewayKeys) expect(apiGateway).toEqual([]);
    else
      expect(apiGateway).toEqual([
        { actions: ['apigateway:GET'], resource: expect.stringMatching(/^"arn:aws:apigateway:[a-z0-9-]+::\/apikeys"$/) },
        { actions: ['apigateway:DELETE'], resource: expect.stringMatching(/^"arn:aws:apigateway:[a-z0-9-]+::\/apikeys\/\*"$/) },
      ]);
    // nothing outside these services
    const services = new Set(statements.flatMap((st) => asArray<string>(st.Action).map((a) => a.split(':')[0])));
    for (const service of services)
      expect(['logs', 'dynamodb', 'sqs', 'kms', 's3', 'xray', ...(f.needs.apiGatewayKeys ? ['apigateway'] : [])]).toContain(service);
  });

  test('no function role carries an AWS managed policy', () => {
    for (const { name } of allFunctions) {
      const role = resource(logicalId(s.stack.functions[name]!.role));
      const arns = asArray<unknown>(role.Properties!.ManagedPolicyArns);
      expect(arns).toEqual([{ Ref: logicalId(s.stack.functions[name]!.role.policy) }]);
    }
  });
});

describe('encryption at rest with the one customer-managed key', () => {
  test('the key rotates and lets CloudWatch Logs use it only for this service’s log groups', () => {
    const key = resource(keyId()).Properties!;
    expect(key.EnableKeyRotation).toBe(true);
    const logs = asArray<any>(key.KeyPolicy.Statement).find((st) => st.Sid === 'CloudWatchLogsForThisServicesLogGroups');
    expect(logs.Principal).toEqual({ Service: 'logs.eu-west-1.amazonaws.com' });
    expect(JSON.stringify(logs.Condition.ArnLike)).toContain(`/aws/lambda/${PREFIX}-*`);
  });

  test('every table: SSE-KMS with the key, point-in-time recovery', () => {
    const tables = resourcesOfType(s.json, 'AWS::DynamoDB::Table');
    expect(tables).toHaveLength(Object.keys(Tables).length);
    for (const [, t] of tables) {
      expect(t.Properties!.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: { 'Fn::GetAtt': [keyId(), 'Arn'] } });
      expect(t.Properties!.PointInTimeRecoverySpecification).toMatchObject({ PointInTimeRecoveryEnabled: true });
    }
  });

  test('every queue (dead-letter queues included) is encrypted with the key and refuses plain HTTP', () => {
    const queues = resourcesOfType(s.json, 'AWS::SQS::Queue');
    expect(queues.length).toBeGreaterThanOrEqual(2 * Object.keys(Queues).length);
    const policies = resourcesOfType(s.json, 'AWS::SQS::QueuePolicy');
    for (const [id, q] of queues) {
      expect(refOf(q.Properties!.KmsMasterKeyId)).toBe(keyId());
      const policy = policies.find(([, p]) => refsIn(p.Properties!.Queues).includes(id));
      expect(JSON.stringify(policy?.[1].Properties!.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    }
  });

  test('documents bucket: SSE-KMS with the key, versioned, public access blocked, TLS only, access logs', () => {
    const bucket = resource(logicalId(s.stack.data.documentsBucket)).Properties!;
    expect(bucket.BucketEncryption.ServerSideEncryptionConfiguration[0]).toEqual({
      BucketKeyEnabled: true,
      ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { 'Fn::GetAtt': [keyId(), 'Arn'] } },
    });
    expect(bucket.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(refOf(bucket.LoggingConfiguration.DestinationBucketName)).toBe(logicalId(s.stack.data.accessLogsBucket));
    const policy = resourcesOfType(s.json, 'AWS::S3::BucketPolicy').find(([, p]) => refOf(p.Properties!.Bucket) === logicalId(s.stack.data.documentsBucket));
    expect(JSON.stringify(policy?.[1].Properties!.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  test('every log group and the alarm topic are encrypted with the key', () => {
    const groups = resourcesOfType(s.json, 'AWS::Logs::LogGroup');
    expect(groups.length).toBeGreaterThanOrEqual(allFunctions.length + 3);
    for (const [, g] of groups) {
      expect(refOf(g.Properties!.KmsKeyId)).toBe(keyId());
      expect(g.Properties!.RetentionInDays).toBeGreaterThan(0);
    }
    for (const [, t] of resourcesOfType(s.json, 'AWS::SNS::Topic')) expect(refOf(t.Properties!.KmsMasterKeyId)).toBe(keyId());
  });
});

describe('tables and queues follow lib/config/service.ts', () => {
  test.each(Object.values(Tables).map((d) => [d.id, d] as const))('%s: same key schema and indexes as the local stack creates', (id, def) => {
    const props = resource(tableId(id)).Properties!;
    const local = createTableInput(def, `${PREFIX}-${def.baseName}`);
    expect(props.TableName).toBe(local.TableName);
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(props.KeySchema).toEqual(local.KeySchema);
    const sortByName = (a: { AttributeName?: string }, b: { AttributeName?: string }) => String(a.AttributeName).localeCompare(String(b.AttributeName));
    expect([...props.AttributeDefinitions].sort(sortByName)).toEqual([...local.AttributeDefinitions!].sort(sortByName));
    const norm = (indexes: any[] | undefined) => (indexes ?? []).map((i) => ({ IndexName: i.IndexName, KeySchema: i.KeySchema, Projection: i.Projection }));
    expect(norm(props.LocalSecondaryIndexes)).toEqual(norm(local.LocalSecondaryIndexes));
    expect(norm(props.GlobalSecondaryIndexes)).toEqual(norm(local.GlobalSecondaryIndexes));
    expect(props.TimeToLiveSpecification).toEqual(def.ttlAttribute ? { AttributeName: def.ttlAttribute, Enabled: true } : undefined);
    // dev stage: the table goes with the stack
    expect(resource(tableId(id)).DeletionPolicy).toBe('Delete');
  });

  it('a retiring index stays on its table and only a function that queries its replacement may read it (synthesis refuses otherwise)', () => {
    const retiring = Object.values(Tables).flatMap((t) => t.indexes.filter((i) => i.retiring).map((i) => [t.id, i] as const));
    for (const [id, index] of retiring) {
      expect(() => tableGrants(id, [`Query:${index.name}`])).toThrow(
        `index ${index.name} is retiring: only a function that queries ${index.retiring} may read it`,
      );
      expect(tableGrants(id, [`Query:${index.retiring!}`]).indexes).toEqual({ [index.retiring!]: ['Query'] });
      expect(tableGrants(id, [`Query:${index.retiring!}`, `Query:${index.name}`]).indexes).toEqual({ [index.retiring!]: ['Query'], [index.name]: ['Query'] });
      expect(resource(tableId(id)).Properties!.GlobalSecondaryIndexes.map((i: { IndexName: string }) => i.IndexName)).toContain(index.name);
    }
    expect(retiring.map(([id, i]) => `${id}.${i.name}`)).toEqual(['forms.byState']);
  });

  test.each(Object.values(Queues).map((d) => [d.id, d] as const))(
    '%s: named, visibility timeout and a dead-letter queue with maxReceiveCount from the list',
    (id, def) => {
      const props = resource(queueId(id)).Properties!;
      expect(props.QueueName).toBe(`${PREFIX}-${def.baseName}`);
      expect(props.VisibilityTimeout).toBe(queueVisibilityTimeouts(BackgroundFunctions)[id]);
      expect(props.VisibilityTimeout).toBeGreaterThanOrEqual(def.visibilityTimeoutSeconds);
      expect(props.RedrivePolicy.maxReceiveCount).toBe(def.maxReceiveCount);
      const dlq = resource(refOf(props.RedrivePolicy.deadLetterTargetArn)!);
      expect(dlq.Properties!.QueueName).toBe(`${PREFIX}-${def.baseName}-dlq`);
    },
  );

  test('every source queue has a dead-letter queue (queues without one are dead-letter queues themselves)', () => {
    const dlqIds = new Set<string>();
    for (const [, q] of resourcesOfType(s.json, 'AWS::SQS::Queue'))
      if (q.Properties!.RedrivePolicy) dlqIds.add(refOf(q.Properties!.RedrivePolicy.deadLetterTargetArn)!);
    for (const [, fn] of resourcesOfType(s.json, 'AWS::Lambda::Function'))
      if (fn.Properties!.DeadLetterConfig) dlqIds.add(refOf(fn.Properties!.DeadLetterConfig.TargetArn)!);
    for (const [id, q] of resourcesOfType(s.json, 'AWS::SQS::Queue')) {
      expect({ id, hasDlq: Boolean(q.Properties!.RedrivePolicy) || dlqIds.has(id) }).toEqual({ id, hasDlq: true });
    }
  });

  test('tables are backed up by an AWS Backup plan', () => {
    const [, selection] = resourcesOfType(s.json, 'AWS::Backup::BackupSelection')[0]!;
    const selected = new Set(refsIn(selection.Properties!.BackupSelection.Resources));
    for (const id of Object.keys(Tables) as TableId[]) expect(selected.has(tableId(id))).toBe(true);
  });
});

describe('REST API', () => {
  const apiId = () => logicalId(s.stack.partnerApi.api);
  const authorizerId = () => logicalId(s.stack.partnerApi.authorizer);

  /** "/a/{b}" of an AWS::ApiGateway::Resource (in the nested endpoints stack), rebuilt from PathPart/ParentId */
  function pathOf(resourceId: unknown): string {
    const ref = refOf(resourceId);
    if (!ref || ref === apiId()) return '';
    const r = s.endpoints.json.Resources[ref]!;
    return `${pathOf(r.Properties!.ParentId)}/${r.Properties!.PathPart}`;
  }

  test('API keys come from the authorizer; REQUEST authorizer without identity source and without caching', () => {
    expect(resource(apiId()).Properties!.ApiKeySourceType).toBe('AUTHORIZER');
    const authorizer = resource(authorizerId()).Properties!;
    expect(authorizer).toMatchObject({ Type: 'REQUEST', AuthorizerResultTtlInSeconds: 0 });
    expect(authorizer.IdentitySource).toBeUndefined();
    expect(JSON.stringify(authorizer.AuthorizerUri)).toContain(fnId(AuthorizerFunction.name));
  });

  test('one method per endpoint of the list: API key required, custom authorizer, proxied to its function', () => {
    const methods = resourcesOfType(s.endpoints.json, 'AWS::ApiGateway::Method').filter(([, m]) => m.Properties!.HttpMethod !== 'ANY');
    expect(methods).toHaveLength(HttpEndpoints.length);
    for (const e of HttpEndpoints) {
      const found = methods.filter(([, m]) => m.Properties!.HttpMethod === e.method && pathOf(m.Properties!.ResourceId) === e.path);
      expect({ route: `${e.method} ${e.path}`, count: found.length }).toEqual({ route: `${e.method} ${e.path}`, count: 1 });
      const props = found[0]![1].Properties!;
      expect(props.Integration.Type).toBe('AWS_PROXY');
      expect(JSON.stringify(props.Integration.Uri)).toContain(fnId(e.name));
    }
    for (const [, m] of methods) {
      expect(m.Properties).toMatchObject({ ApiKeyRequired: true, AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId() } });
    }
  });

  test('every other method on a path of the list: an ANY mock method answering 405 problem+json with Allow (as the local gateway)', () => {
    const anyMethods = resourcesOfType(s.endpoints.json, 'AWS::ApiGateway::Method').filter(([, m]) => m.Properties!.HttpMethod === 'ANY');
    const paths = [...new Set(HttpEndpoints.map((e) => e.path))];
    expect(anyMethods.map(([, m]) => pathOf(m.Properties!.ResourceId)).sort()).toEqual([...paths].sort());
    for (const [, m] of anyMethods) {
      const path = pathOf(m.Properties!.ResourceId);
      const integration = m.Properties!.Integration;
      expect(integration.Type).toBe('MOCK');
      const response = integration.IntegrationResponses[0];
      expect(response.StatusCode).toBe('405');
      expect(response.ResponseParameters['method.response.header.Allow']).toBe(`'${allowedMethods(path).join(', ')}'`);
      expect(response.ResponseParameters['method.response.header.Content-Type']).toBe("'application/problem+json'");
      expect(JSON.parse(response.ResponseTemplates['application/json'])).toMatchObject({
        type: '/problems/method-not-allowed',
        status: 405,
        requestId: '$context.requestId',
      });
    }
  });

  test('usage plans: partner tiers and the anonymous plan with its key, on this stage', () => {
    const plans = resourcesOfType(s.json, 'AWS::ApiGateway::UsagePlan');
    const byName = new Map(plans.map(([id, p]) => [p.Properties!.UsagePlanName, { id, p: p.Properties! }]));
    for (const [tier, t] of Object.entries(PartnerTiers)) {
      const plan = byName.get(`${PREFIX}-${tier}`)!;
      expect(plan.p.Throttle).toEqual({ RateLimit: t.rateLimit, BurstLimit: t.burstLimit });
      expect(plan.p.Quota).toEqual({ Limit: t.monthlyQuota, Period: 'MONTH' });
      expect(refOf(plan.p.ApiStages[0].ApiId)).toBe(apiId());
    }
    const anon = byName.get(`${PREFIX}-anonymous`)!;
    expect(anon.p.Throttle).toEqual({ RateLimit: AnonymousTier.rateLimit, BurstLimit: AnonymousTier.burstLimit });
    s.template.hasResourceProperties('AWS::ApiGateway::UsagePlanKey', { KeyType: 'API_KEY', UsagePlanId: { Ref: anon.id } });
  });

  test('gateway responses are problem+json with requestId and echo x-request-id', () => {
    const responses = new Map(resourcesOfType(s.json, 'AWS::ApiGateway::GatewayResponse').map(([, r]) => [r.Properties!.ResponseType, r.Properties!]));
    for (const type of [
      'DEFAULT_4XX',
      'DEFAULT_5XX',
      'THROTTLED',
      'QUOTA_EXCEEDED',
      'AUTHORIZER_FAILURE',
      'INVALID_API_KEY',
      'MISSING_AUTHENTICATION_TOKEN',
      'INTEGRATION_TIMEOUT',
    ]) {
      const r = responses.get(type);
      expect({ type, present: Boolean(r) }).toEqual({ type, present: true });
      expect(r!.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/problem+json'",
        'gatewayresponse.header.x-request-id': 'method.request.header.x-request-id',
      });
      const template: string = r!.ResponseTemplates['application/json'];
      const body = JSON.parse(template.replace('$context.error.messageString', '"gateway message"'));
      expect(body).toMatchObject({
        type: expect.stringMatching(/^\/problems\//),
        title: expect.any(String),
        detail: expect.any(String),
        requestId: '$context.requestId',
      });
    }
    expect(responses.get('AUTHORIZER_FAILURE')!.StatusCode).toBe('503');
    expect(responses.get('THROTTLED')!.StatusCode).toBe('429');
    expect(responses.get('QUOTA_EXCEEDED')!.StatusCode).toBe('429');
    expect(responses.get('INVALID_API_KEY')!.StatusCode).toBe('401');
    expect(responses.get('DEFAULT_4XX')!.StatusCode).toBeUndefined();
  });

  test('stage: X-Ray, KMS-encrypted access log without the API key, error-only execution logs, WAF', () => {
    const [stageId, stage] = resourcesOfType(s.json, 'AWS::ApiGateway::Stage')[0]!;
    expect(stage.Properties).toMatchObject({ StageName: 'dev', TracingEnabled: true });
    expect(stage.Properties!.MethodSettings[0]).toMatchObject({ LoggingLevel: 'ERROR', DataTraceEnabled: false, MetricsEnabled: true });
    const accessLogs = resource(refsIn(stage.Properties!.AccessLogSetting.DestinationArn)[0]!);
    expect(refOf(accessLogs.Properties!.KmsKeyId)).toBe(keyId());
    expect(stage.Properties!.AccessLogSetting.Format).toBe(ACCESS_LOG_FORMAT);
    expect(ACCESS_LOG_FORMAT).not.toContain('apiKey');
    const executionLogs = resourcesOfType(s.json, 'AWS::Logs::LogGroup').find(([, g]) =>
      JSON.stringify(g.Properties!.LogGroupName).includes('API-Gateway-Execution-Logs_'),
    );
    expect(executionLogs).toBeDefined();
    expect(asArray(stage.DependsOn)).toContain(executionLogs![0]);
    const [, association] = resourcesOfType(s.json, 'AWS::WAFv2::WebACLAssociation')[0]!;
    expect(JSON.stringify(association.Properties!.ResourceArn)).toContain(stageId);
    s.template.hasResourceProperties('AWS::WAFv2::LoggingConfiguration', { RedactedFields: Match.arrayWith([{ SingleHeader: { Name: 'x-api-key' } }]) });
  });
});

describe('alarms', () => {
  // the alarms live in the nested alarms stack; s.alarms.json reads its parameters as the parent resources they carry
  const alarms = () => resourcesOfType(s.alarms.json, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties!);
  const topic = () => logicalId(s.stack.alarms.topic);

  test('the alarms and the dashboard are in the nested alarms stack (and nothing else is); the topic stays in the stage stack', () => {
    expect(resourcesOfType(s.json, 'AWS::CloudWatch::Alarm')).toEqual([]);
    expect(resourcesOfType(s.json, 'AWS::CloudWatch::Dashboard')).toEqual([]);
    expect(
      resourcesOfType(s.json, 'AWS::CloudFormation::Stack')
        .map(([id]) => id)
        .sort(),
    ).toEqual([s.alarms.resourceId, s.endpoints.resourceId].sort());
    expect(new Set(Object.values(s.alarms.raw.Resources).map((r) => r.Type))).toEqual(
      new Set(['AWS::CloudWatch::Alarm', 'AWS::CloudWatch::Dashboard', 'AWS::Logs::MetricFilter']),
    );
    expect(resourcesOfType(s.json, 'AWS::SNS::Topic').map(([id]) => id)).toEqual([topic()]);
    // every parameter is passed by the parent, and every other Ref names a resource of the nested stack or a pseudo parameter
    const params = Object.keys(s.alarms.raw.Parameters ?? {});
    const passed = Object.keys(resource(s.alarms.resourceId).Properties!.Parameters ?? {});
    expect(passed.sort()).toEqual([...params].sort());
    for (const ref of refsIn(s.alarms.json.Resources)) {
      const known = ref in s.json.Resources || ref in s.alarms.raw.Resources || ref.startsWith('AWS::');
      expect({ ref, known }).toEqual({ ref, known: true });
    }
  });

  test('every alarm names a runbook section of infra/README.md that exists; the dashboard links "Answer an alarm"', () => {
    const readme = fs.readFileSync(path.join(__dirname, 'README.md'), 'utf8');
    const anchors = new Set([...readme.matchAll(/^#{2,3} (.+)$/gm)].map((m) => headingAnchor(m[1]!)));
    for (const a of alarms()) {
      const anchor = /Runbook: infra\/README\.md#([a-z0-9-]+)$/.exec(a.AlarmDescription as string)?.[1];
      expect({ alarm: a.AlarmName, anchor: anchor && anchors.has(anchor) ? anchor : `missing in ${a.AlarmDescription}` }).toEqual({
        alarm: a.AlarmName,
        anchor,
      });
    }
    expect(anchors.has(headingAnchor(ANSWER_AN_ALARM))).toBe(true);
    const [dashboard] = resourcesOfType(s.alarms.json, 'AWS::CloudWatch::Dashboard');
    expect(JSON.stringify(dashboard![1].Properties!.DashboardBody)).toContain(`infra/README.md#${headingAnchor(ANSWER_AN_ALARM)}`);
  });

  test('alarms on GSI throttles, API p99 latency, 4XX and 429 rates, quota used up, KMS request rate', () => {
    const byName = (suffix: string) => alarms().find((a) => a.AlarmName === `${PREFIX}-${suffix}`);
    const gsis = Object.values(Tables).flatMap((t) => t.indexes.filter((i) => i.kind === 'global').map((i) => [t.id, i.name] as const));
    expect(gsis.length).toBeGreaterThan(0);
    for (const [table, index] of gsis) {
      const alarm = byName(`table-${table}-${index}-throttles`);
      expect(JSON.stringify(alarm?.Metrics)).toContain(`"GlobalSecondaryIndexName","Value":"${index}"`);
      expect(refsIn(alarm?.Metrics)).toContain(tableId(table));
    }
    expect(byName('api-latency-p99')).toMatchObject({ ExtendedStatistic: 'p99', Threshold: 5000, EvaluationPeriods: 3, MetricName: 'Latency' });
    expect(JSON.stringify(byName('api-4xx-rate')?.Metrics)).toContain('IF(requests >= 100, 100 * errors / requests, 0)');
    expect(byName('api-4xx-rate')).toMatchObject({ Threshold: 25 });
    expect(byName('api-429-rate')).toMatchObject({ Threshold: 5 });
    expect(byName('api-quota-exceeded')).toMatchObject({ Threshold: 0, MetricName: 'ApiQuotaExceeded' });
    const accessLogs = logicalId(s.stack.partnerApi.accessLogs);
    const filters = resourcesOfType(s.alarms.json, 'AWS::Logs::MetricFilter')
      .map(([, f]) => f.Properties!)
      .filter((f) => refOf(f.LogGroupName) === accessLogs);
    expect(filters.map((f) => f.FilterPattern).sort()).toEqual(['{ $.errorType = "QUOTA_EXCEEDED" }', '{ $.status = "429" }']);
    expect(JSON.stringify(byName('kms-request-rate')?.Metrics)).toContain('GenerateDataKey');
    expect(byName('kms-request-rate')).toMatchObject({ Threshold: 4400 });
  });

  test('every alarm notifies the alarm topic', () => {
    expect(alarms().length).toBeGreaterThanOrEqual(3 * allFunctions.length);
    for (const a of alarms()) expect(a.AlarmActions).toEqual([{ Ref: topic() }]);
  });

  test('depth > 0 on every dead-letter queue', () => {
    const dlqs = resourcesOfType(s.json, 'AWS::SQS::Queue').filter(([id]) => !Object.keys(Queues).some((q) => queueId(q as QueueId) === id));
    expect(dlqs.length).toBeGreaterThanOrEqual(Object.keys(Queues).length);
    for (const [id] of dlqs) {
      const alarm = alarms().find((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && refsIn(a.Dimensions).includes(id));
      expect({ id, alarm: alarm && { t: alarm.Threshold, op: alarm.ComparisonOperator } }).toEqual({ id, alarm: { t: 0, op: 'GreaterThanThreshold' } });
    }
  });

  test('age of the oldest message on every source queue', () => {
    for (const id of Object.keys(Queues) as QueueId[]) {
      expect(alarms().some((a) => a.MetricName === 'ApproximateAgeOfOldestMessage' && refsIn(a.Dimensions).includes(queueId(id)))).toBe(true);
    }
  });

  test('throttles of every function, authorizer errors, API 5XX rate', () => {
    for (const { name } of allFunctions) {
      expect(alarms().some((a) => a.MetricName === 'Throttles' && refsIn(a.Dimensions).includes(fnId(name)))).toBe(true);
    }
    expect(alarms().some((a) => a.MetricName === 'Errors' && refsIn(a.Dimensions).includes(fnId(AuthorizerFunction.name)))).toBe(true);
    const rate = alarms().find((a) => a.AlarmName === `${PREFIX}-api-5xx-rate`)!;
    expect(JSON.stringify(rate.Metrics)).toContain('5XXError');
  });
});

test('outputs: API URL, table names, queue URLs, key ARN, usage plan ids, bucket name', () => {
  const outputs = Object.keys(s.json.Outputs ?? {});
  const expected = [
    'ApiUrl',
    'KmsKeyArn',
    'DocumentsBucketName',
    'UsagePlanIdAnonymous',
    'UsagePlanIdStaff',
    'BackupVaultName',
    ...Object.keys(PartnerTiers).map((t) => `UsagePlanId${pascal(t)}`),
    ...Object.keys(Tables).map((t) => `Table${pascal(t)}Name`),
    ...Object.keys(Queues).map((q) => `Queue${pascal(q)}Url`),
  ];
  expect(outputs).toEqual(expect.arrayContaining(expected));
});

describe('the stage publishes its API reference', () => {
  const packageDir = (name: string) => {
    const manifest = JSON.parse(fs.readFileSync(path.join(s.outdir, `${PREFIX}.assets.json`), 'utf8'));
    const code = resource(fnId(name)).Properties!.Code;
    return path.join(s.outdir, manifest.files[String(code.S3Key).replace(/\.zip$/, '')].source.path);
  };

  test('GET /openapi.json and GET /docs are routes of the API, each its own function behind the same authorizer', () => {
    const methods = resourcesOfType(s.endpoints.json, 'AWS::ApiGateway::Method').map(([, r]) => r.Properties!);
    for (const name of ['serveOpenApiDocument', 'serveApiReference']) {
      const method = methods.find((m) => JSON.stringify(m.Integration?.Uri ?? '').includes(fnId(name)));
      expect(method).toBeDefined();
      expect(method!.HttpMethod).toBe('GET');
      expect(method!.AuthorizationType).toBe('CUSTOM');
    }
  });

  test('their packages carry the committed docs/openapi.json byte for byte, and the page also the Redoc bundle', () => {
    const committed = fs.readFileSync(path.join(REPO_ROOT, BundledFiles.openApiDocument.source));
    for (const name of ['serveOpenApiDocument', 'serveApiReference'])
      expect(fs.readFileSync(path.join(packageDir(name), BundledFiles.openApiDocument.name)).equals(committed)).toBe(true);
    const redoc = fs.readFileSync(path.join(packageDir('serveApiReference'), BundledFiles.redocBundle.name), 'utf8');
    expect(redoc).toContain('Redoc');
    expect(fs.existsSync(path.join(packageDir('serveOpenApiDocument'), BundledFiles.redocBundle.name))).toBe(false);
    // no other function carries them
    expect(fs.existsSync(path.join(packageDir('exportHl7Note'), BundledFiles.openApiDocument.name))).toBe(false);
  });

  test('the deployed packages serve them: each bundle, run by node from its own directory, answers 200 from its bundled files', () => {
    const decision = encodeDecision({
      outcome: 'allow',
      reason: 'anonymous',
      principal: { keyId: 'anonymous', partnerId: 'anonymous', scopes: [], allowedSenderIds: [] },
      rateLimit: { limit: 20, remaining: 19, reset: 1_900_000_000, exceeded: false },
    });
    const committed = fs.readFileSync(path.join(REPO_ROOT, BundledFiles.openApiDocument.source), 'utf8');
    for (const [name, resourcePath] of [
      ['serveOpenApiDocument', '/openapi.json'],
      ['serveApiReference', '/docs'],
    ] as const) {
      const dir = packageDir(name);
      const event = {
        resource: resourcePath,
        path: resourcePath,
        httpMethod: 'GET',
        headers: {},
        multiValueHeaders: {},
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: null,
        body: null,
        isBase64Encoded: false,
        requestContext: { requestId: 'r1', identity: { sourceIp: '192.0.2.1' }, authorizer: { ...decision, principalId: 'anonymous' } },
      };
      const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(path.join(dir, 'index.mjs')).href)});
const r = await handler(${JSON.stringify(event)}, { functionName: '${name}', awsRequestId: 'a1', getRemainingTimeInMillis: () => 5000 });
process.stdout.write('\\n@@answer@@' + JSON.stringify({ status: r.statusCode, type: r.headers['content-type'], csp: r.headers['content-security-policy'] ?? '', body: r.body }));`;
      // run outside the repository, as Lambda does: nothing may be read from the source tree
      const out = execFileSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], {
        cwd: os.tmpdir(),
        env: { PATH: process.env.PATH, LAMBDA_TASK_ROOT: dir, STAGE: 'dev', LOG_LEVEL: 'ERROR' },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      const answer = JSON.parse(out.slice(out.lastIndexOf('@@answer@@') + '@@answer@@'.length)) as { status: number; type: string; csp: string; body: string };
      expect(answer.status).toBe(200);
      if (name === 'serveOpenApiDocument') expect(answer.body).toBe(committed);
      else {
        expect(answer.type).toBe('text/html; charset=utf-8');
        expect(answer.csp).toContain("default-src 'none'");
        expect(answer.body).toContain('Redoc.init(');
        expect(answer.body.length).toBeGreaterThan(1_000_000);
      }
    }
  }, 60_000);

  test('the stack outputs both URLs, under the stage', () => {
    const outputs = s.json.Outputs ?? {};
    for (const [id, suffix] of [
      ['ApiReferenceUrl', '/docs'],
      ['OpenApiDocumentUrl', '/openapi.json'],
    ] as const) {
      const value = JSON.stringify(outputs[id]?.Value);
      expect(value).toContain(logicalId(s.stack.partnerApi.api));
      expect(value).toContain(logicalId(s.stack.partnerApi.api.deploymentStage));
      expect(value).toContain(suffix);
    }
  });

  test('synthesis fails naming a bundled file that is missing', () => {
    expect(() => assertBundledFilesExist([{ name: 'serveX', bundledFiles: [{ name: 'x.json', source: 'docs/no-such-file.json' }] }])).toThrow(
      /serveX: docs\/no-such-file\.json/,
    );
  });
});

describe('alarms reach someone, least privilege holds, redeploy works', () => {
  const policyDocs = (type: string) => resourcesOfType(s.json, type).map(([, r]) => r.Properties!.PolicyDocument ?? r.Properties!.KeyPolicy);

  test('the alarm topic policy lets CloudWatch alarms of this account and stage publish, and the key policy matches', () => {
    const topicStatements = policyDocs('AWS::SNS::TopicPolicy').flatMap((d) => asArray<any>(d.Statement));
    const publish = topicStatements.find((st) => st.Effect === 'Allow' && JSON.stringify(st.Principal).includes('cloudwatch.amazonaws.com'));
    expect(publish).toBeDefined();
    expect(asArray(publish.Action)).toEqual(['sns:Publish']);
    expect(publish.Condition.StringEquals['aws:SourceAccount']).toBe('123456789012');
    expect(JSON.stringify(publish.Condition.ArnLike['aws:SourceArn'])).toContain(`:alarm:${PREFIX}-*`);
    const keyStatements = policyDocs('AWS::KMS::Key').flatMap((d) => asArray<any>(d.Statement));
    const cw = keyStatements.find((st) => JSON.stringify(st.Principal).includes('cloudwatch.amazonaws.com'));
    expect(cw.Condition.StringEquals['aws:SourceAccount']).toBe('123456789012');
    expect(JSON.stringify(cw.Condition.ArnLike['aws:SourceArn'])).toBe(JSON.stringify(publish.Condition.ArnLike['aws:SourceArn']));
    // every alarm's name falls under that pattern (the alarms are in the nested stack, the topic and key in the stage stack)
    const alarms = resourcesOfType(s.alarms.json, 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThanOrEqual(3 * allFunctions.length);
    for (const [, a] of alarms) expect(a.Properties!.AlarmName).toMatch(new RegExp(`^${PREFIX}-`));
  });

  test('no role may UpdateItem, DeleteItem or BatchWriteItem on the audit table; the audit trail writes with attribute_not_exists', () => {
    const audit = tableId('audit');
    for (const [, doc] of resourcesOfType(s.json, 'AWS::IAM::ManagedPolicy').map(([id, r]) => [id, r.Properties!.PolicyDocument] as const)) {
      for (const st of asArray<any>(doc.Statement)) {
        if (!refsIn(st.Resource).includes(audit)) continue;
        for (const a of asArray<string>(st.Action)) expect(['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query']).toContain(a);
      }
    }
    const source = fs.readFileSync(path.join(__dirname, '..', 'lib', 'audit', 'audit-trail.ts'), 'utf8');
    expect(source).toContain("ConditionExpression: 'attribute_not_exists(pk)'");
    expect(source).not.toMatch(/UpdateItemCommand|DeleteItemCommand|BatchWriteItemCommand/);
  });

  test('every direct KMS statement carries kms:EncryptionContext:purpose, and each bundle uses only purposes its needs list', () => {
    const purposes = Object.values(KmsPurposes);
    for (const f of allFunctions) {
      for (const st of functionStatements(f.name)) {
        const kmsOnly = asArray<string>(st.Action).every((a) => a.startsWith('kms:'));
        if (!kmsOnly) continue;
        expect(Object.keys(st.Condition?.StringEquals ?? {})).toEqual([expect.stringMatching(/^kms:(ViaService|EncryptionContext:purpose)$/)]);
      }
      const manifest = JSON.parse(fs.readFileSync(path.join(s.outdir, `${PREFIX}.assets.json`), 'utf8'));
      const hash = String(resource(fnId(f.name)).Properties!.Code.S3Key).replace(/\.zip$/, '');
      const bundle = fs.readFileSync(path.join(s.outdir, manifest.files[hash].source.path, 'index.mjs'), 'utf8');
      // the KmsPurposes table (lib/config) is in no bundle (a bundle carries only
      // the service facts its code reads), so every purpose string in a bundle is one its code uses
      expect(bundle).not.toMatch(/labResult:\s*"lab-result"/);
      const code = bundle;
      const used = purposes.filter((p) => code.includes(`"${p}"`) || code.includes(`'${p}'`));
      const usesKms = /GenerateDataKeyCommand|DecryptCommand|EncryptCommand/.test(bundle);
      if (!f.needs.kms) expect({ fn: f.name, usesKms }).toEqual({ fn: f.name, usesKms: false });
      // a purpose in the bundle but not in needs would be AccessDenied in the cloud
      expect({ fn: f.name, missing: used.filter((p) => !(f.needs.kmsPurposes ?? []).includes(p)) }).toEqual({ fn: f.name, missing: [] });
    }
  });

  test('alarms: errors and p99 duration of every function, throttles of every table, WAF blocked requests', () => {
    const alarms = resourcesOfType(s.alarms.json, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties!);
    for (const f of allFunctions) {
      expect(alarms.some((a) => a.MetricName === 'Errors' && refsIn(a.Dimensions).includes(fnId(f.name)))).toBe(true);
      const duration = alarms.find((a) => a.MetricName === 'Duration' && refsIn(a.Dimensions).includes(fnId(f.name)));
      expect(duration).toMatchObject({ ExtendedStatistic: 'p99', Threshold: f.timeoutSeconds * 800 });
    }
    for (const id of Object.keys(Tables) as TableId[]) {
      const alarm = alarms.find((a) => a.AlarmName === `${PREFIX}-table-${id}-throttles`);
      expect(JSON.stringify(alarm?.Metrics)).toContain('WriteThrottleEvents');
      expect(refsIn(alarm?.Metrics)).toContain(tableId(id));
    }
    expect(alarms.find((a) => a.AlarmName === `${PREFIX}-waf-blocked`)).toMatchObject({
      Namespace: 'AWS/WAFV2',
      MetricName: 'BlockedRequests',
      Threshold: 100,
    });
  });

  test('an operations dashboard with requests, 4xx/5xx by endpoint, p50/p99, throttles, queue ages, KMS calls', () => {
    const [dashboard] = resourcesOfType(s.alarms.json, 'AWS::CloudWatch::Dashboard');
    expect(dashboard![1].Properties!.DashboardName).toBe(`${PREFIX}-operations`);
    const body = JSON.stringify(dashboard![1].Properties!.DashboardBody);
    for (const needle of [
      '4XXError',
      '5XXError',
      'p50',
      'p99',
      'ReadThrottleEvents',
      'Throttles',
      'ApproximateAgeOfOldestMessage',
      'CallCount',
      'BlockedRequests',
    ])
      expect(body).toContain(needle);
    for (const e of HttpEndpoints) expect(body).toContain(e.path);
  });

  test('the retained backup vault gets a new name for every creation of the stack', () => {
    const [[, vault]] = resourcesOfType(s.json, 'AWS::Backup::BackupVault') as [[string, CfnResourceJson]];
    expect(vault.DeletionPolicy).toBe('Retain');
    expect(JSON.stringify(vault.Properties!.BackupVaultName)).toContain('AWS::StackId');
  });
});

test('SSM parameters give npm run keys each tier usage plan id; the tiers are the ones partner records name', () => {
  expect(Object.keys(PartnerTiers).sort()).toEqual([...PARTNER_TIERS].sort());
  const params = resourcesOfType(s.json, 'AWS::SSM::Parameter').map(([, r]) => r.Properties!);
  for (const tier of PARTNER_TIERS) {
    const param = params.find((p) => p.Name === usagePlanParameterName(PREFIX, tier));
    expect(param?.Value).toEqual({ Ref: logicalId(s.stack.partnerApi.usagePlans[tier]) });
  }
});

describe('cdk-nag', () => {
  test.each(nagPacks().map((p) => [p.readPackName, p] as const))('%s: no unacknowledged finding', (_name, pack) => {
    const report = pack.validateScope(s.app);
    const findings = report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${r.constructPath}`));
    expect(findings).toEqual([]);
  });

  test('the packs check the nested alarms stack too: an alarm there without actions is a finding', () => {
    const alarm = s.stack.alarms.stack.node.findAll().find((c): c is cloudwatch.CfnAlarm => c instanceof cloudwatch.CfnAlarm)!;
    const hipaa = nagPacks().find((p) => p.readPackName === 'HIPAA.Security')!;
    alarm.actionsEnabled = false;
    try {
      const findings = hipaa.validateScope(s.app).violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${r.constructPath}`));
      expect(findings).toEqual([`HIPAA.Security-CloudWatchAlarmAction @ ${alarm.node.path}`]);
    } finally {
      alarm.actionsEnabled = undefined;
    }
  });

  test('every acknowledgement sits on one CloudFormation resource, names one rule and gives a reason', () => {
    const acknowledged: string[] = [];
    for (const node of s.app.node.findAll()) {
      for (const entry of node.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        expect({ path: node.node.path, isResource: CfnResource.isCfnResource(node) }).toEqual({ path: node.node.path, isResource: true });
        for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
          expect(id).toMatch(/(AwsSolutions|HIPAA\.Security)-[A-Za-z0-9]+(\[.+\])?$/);
          expect(String(reason).length).toBeGreaterThan(40);
          acknowledged.push(id);
        }
      }
    }
    expect(acknowledged.length).toBeGreaterThan(0);
  });

  test('no acknowledgement is stale: each one matches a finding the packs really raise on that resource', () => {
    const raised = new Set<string>();
    for (const pack of nagPacks()) {
      // look past acknowledgements (test-only: the pack's private check is replaced)
      (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
      for (const v of pack.validateScope(s.app).violations) for (const r of v.violatingResources) raised.add(`${v.ruleName} @ ${r.constructPath}`);
    }
    const stale: string[] = [];
    for (const node of s.app.node.findAll()) {
      for (const entry of node.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const id of Object.keys(entry.data as Record<string, string>)) {
          const key = `${id.replace(/^annotation::/i, '')} @ ${node.node.path}`;
          if (!raised.has(key)) stale.push(key);
        }
      }
    }
    expect(stale).toEqual([]);
  });
});

describe('staff sign-in for the inbox page', () => {
  test('a Cognito user pool without self sign-up, MFA required, a reviewers group and a PKCE public client for the page', () => {
    const pools = resourcesOfType(s.json, 'AWS::Cognito::UserPool');
    expect(pools).toHaveLength(1);
    const pool = pools[0]![1].Properties!;
    expect(pool.AdminCreateUserConfig).toMatchObject({ AllowAdminCreateUserOnly: true });
    expect(pool.MfaConfiguration).toBe('ON');
    expect(resourcesOfType(s.json, 'AWS::Cognito::UserPoolGroup').map(([, r]) => r.Properties!.GroupName)).toEqual(['interop-reviewers']);
    const clients = resourcesOfType(s.json, 'AWS::Cognito::UserPoolClient');
    expect(clients).toHaveLength(1);
    const client = clients[0]![1].Properties!;
    expect(client.GenerateSecret).toBe(false);
    expect(client.AllowedOAuthFlows).toEqual(['code']);
    expect(JSON.stringify(client.CallbackURLs)).toContain('/dev/inbox');
  });

  test('the authorizer and the page function read the pool, client and hosted sign-in endpoints', () => {
    for (const name of [AuthorizerFunction.name, 'serveInboxPage']) {
      const vars = resource(fnId(name)).Properties!.Environment.Variables;
      expect(JSON.stringify(vars[Env.staffClientId])).toContain(logicalId(s.stack.staffSignIn.client));
      expect(JSON.stringify(vars[Env.staffTokenUrl])).toContain('/oauth2/token');
    }
  });
});
