/**
 * Stage settings and "whatever the lists hold": a production stage (retention, deletion
 * protection), lists with functions that do not exist yet (a second queue worker, another
 * schedule, a nested route with a path parameter) built from a stub entry, and the checks that
 * reject lists CloudFormation would only reject at deploy time. Bundling is skipped here (the
 * template shape is the subject; infra/interop-stack.test.ts bundles every real function).
 */
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints, Scopes, type BackgroundFunction, type HttpEndpoint } from '../lib/config/service';
import { readStageConfig } from './config';
import { InteropStack, validateFunctionLists } from './interop-stack';
import { nagPacks } from './nag';
import { DEFAULT_FUNCTIONS_DIR, entryPath } from './service-function';
import { TEST_ACCOUNT, TEST_REGION, cdkJsonContext, refOf, removeAssembly, resourcesOfType, synthesize, type Synthesized } from './testing';

const STUB = path.join(__dirname, 'test-fixtures', 'stub-handler.ts');

describe('production stage', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize({ context: { stage: 'prod', alarmEmail: 'oncall@example.org' }, bundle: false });
  });
  afterAll(() => removeAssembly(s));

  test('background functions reserve concurrency (queue worker 5, schedules 1); no warning with an alarm e-mail', () => {
    for (const b of BackgroundFunctions) {
      const fn = s.json.Resources[s.stack.getLogicalId(s.stack.functions[b.name]!.fn.node.defaultChild as never)]!.Properties!;
      expect(fn.ReservedConcurrentExecutions).toBe(b.kind === 'queue' ? 5 : 1);
    }
    expect(Annotations.fromStack(s.stack).findWarning('*', Match.stringLikeRegexp('alarmEmail'))).toEqual([]);
  });

  test('without -c alarmEmail outside dev, synth warns; dev does not', () => {
    const bare = synthesize({ context: { stage: 'staging' }, bundle: false });
    try {
      expect(Annotations.fromStack(bare.stack).findWarning('*', Match.stringLikeRegexp('no alarm subscriber: pass -c alarmEmail'))).toHaveLength(1);
    } finally {
      removeAssembly(bare);
    }
    const dev = synthesize({ bundle: false });
    try {
      expect(Annotations.fromStack(dev.stack).findWarning('*', Match.stringLikeRegexp('alarmEmail'))).toEqual([]);
    } finally {
      removeAssembly(dev);
    }
  });

  test('names carry the interop-prod prefix', () => {
    expect(s.stack.stackName).toBe('interop-prod');
    for (const [, fn] of resourcesOfType(s.json, 'AWS::Lambda::Function')) expect(fn.Properties!.FunctionName).toMatch(/^interop-prod-/);
    for (const [, t] of resourcesOfType(s.json, 'AWS::DynamoDB::Table')) expect(t.Properties!.TableName).toMatch(/^interop-prod-/);
  });

  test('tables are retained and deletion-protected; key, queues and log groups are retained', () => {
    for (const [, t] of resourcesOfType(s.json, 'AWS::DynamoDB::Table')) {
      expect(t.DeletionPolicy).toBe('Retain');
      expect(t.Properties!.DeletionProtectionEnabled).toBe(true);
    }
    for (const type of ['AWS::KMS::Key', 'AWS::SQS::Queue', 'AWS::Logs::LogGroup', 'AWS::S3::Bucket']) {
      for (const [id, r] of resourcesOfType(s.json, type)) expect({ id, policy: r.DeletionPolicy }).toEqual({ id, policy: 'Retain' });
    }
  });

  test('one-year log retention, info logging, alarm e-mail subscription', () => {
    for (const [, g] of resourcesOfType(s.json, 'AWS::Logs::LogGroup')) expect(g.Properties!.RetentionInDays).toBe(365);
    for (const [, fn] of resourcesOfType(s.json, 'AWS::Lambda::Function')) expect(fn.Properties!.Environment.Variables.LOG_LEVEL).toBe('info');
    s.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.org' });
  });

  test.each(nagPacks().map((p) => [p.readPackName, p] as const))('%s: no unacknowledged finding', (_name, pack) => {
    const findings = pack.validateScope(s.app).violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${r.constructPath}`));
    expect(findings).toEqual([]);
  });
});

describe('lists with functions that do not exist yet', () => {
  const extraBackground: BackgroundFunction[] = [
    {
      kind: 'queue',
      name: 'deliverNotifications',
      queue: 'notifications',
      needs: { tables: { results: ['GetItem', 'PutItem'] }, documentsBucket: 'read', kms: ['Decrypt'], kmsPurposes: ['lab-result'] },
      memoryMb: 256,
      timeoutSeconds: 20,
    },
    {
      kind: 'schedule',
      name: 'purgeExpiredInbox',
      schedule: 'cron(0 3 * * ? *)',
      needs: { tables: { forms: ['GetItem', 'PutItem'] } },
      memoryMb: 128,
      timeoutSeconds: 120,
    },
  ];
  const extraHttp: HttpEndpoint[] = [
    {
      kind: 'http',
      name: 'getPacketDocument',
      method: 'GET',
      path: '/interopInbox/{packetId}/documents/{documentId}',
      scope: Scopes.inboxReview,
      needs: { tables: { forms: ['GetItem'] }, documentsBucket: 'read' },
      memoryMb: 256,
      timeoutSeconds: 10,
    },
  ];
  const extraNames = new Set([...extraBackground, ...extraHttp].map((f) => f.name));
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize({
      bundle: false,
      context: { reservedConcurrency: 'true' },
      props: {
        httpEndpoints: [...HttpEndpoints, ...extraHttp],
        // every queue has its consumer now: the hypothetical worker takes the notifications queue's place
        backgroundFunctions: [...BackgroundFunctions.filter((f) => f.queue !== 'notifications'), ...extraBackground],
        reservedConcurrencyOverrides: { deliverNotifications: 3 },
        entryFor: (name) => (extraNames.has(name) ? STUB : entryPath(DEFAULT_FUNCTIONS_DIR, name)),
      },
    });
  });
  afterAll(() => removeAssembly(s));
  const fnId = (name: string) => s.stack.getLogicalId(s.stack.functions[name]!.fn.node.defaultChild as never);

  test('a second queue worker gets its event source, its concurrency, and consume rights on its queue only', () => {
    const fn = s.json.Resources[fnId('deliverNotifications')]!.Properties!;
    expect(fn.ReservedConcurrentExecutions).toBe(3);
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId('deliverNotifications') },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 3 },
    });
    expect(fn.Environment.Variables).toHaveProperty('NOTIFICATIONS_QUEUE_URL');
  });

  test('another schedule gets a rule, a dead-letter queue and its alarm', () => {
    s.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(0 3 * * ? *)' });
    const dlqId = refOf(s.json.Resources[fnId('purgeExpiredInbox')]!.Properties!.DeadLetterConfig.TargetArn)!;
    s.alarms.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
    });
  });

  test('a nested route with path parameters becomes one more authorized method', () => {
    // the ANY mock methods answering 405 on every path are not endpoints
    // (in the nested endpoints stack, infra/partner-api.ts)
    const methods = resourcesOfType(s.endpoints.json, 'AWS::ApiGateway::Method').filter(([, m]) => m.Properties!.HttpMethod !== 'ANY');
    expect(methods).toHaveLength(HttpEndpoints.length + 1);
    s.endpoints.template.hasResourceProperties('AWS::ApiGateway::Resource', { PathPart: '{documentId}' });
    for (const [, m] of methods) expect(m.Properties).toMatchObject({ ApiKeyRequired: true, AuthorizationType: 'CUSTOM' });
  });

  test.each(nagPacks().map((p) => [p.readPackName, p] as const))('%s: still no unacknowledged finding', (_name, pack) => {
    const findings = pack.validateScope(s.app).violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${r.constructPath}`));
    expect(findings).toEqual([]);
  });
});

describe('lists CloudFormation would reject are refused at synthesis', () => {
  const queueFn = (over: Partial<BackgroundFunction> = {}): BackgroundFunction => ({
    kind: 'queue',
    name: 'worker',
    queue: 'matching',
    needs: {},
    memoryMb: 128,
    timeoutSeconds: 10,
    ...over,
  });

  test.each([
    ['duplicate name', [queueFn({ name: AuthorizerFunction.name })], /used twice/],
    ['timeout above the queue visibility timeout', [queueFn({ timeoutSeconds: 181 })], /exceeds the visibility timeout/],
    ['queue function without a queue', [queueFn({ queue: undefined })], /must name a queue/],
    ['two consumers of one queue', [queueFn({ name: 'a' }), queueFn({ name: 'b' })], /two consumers/],
    ['schedule without an expression', [{ ...queueFn(), kind: 'schedule' as const, queue: undefined, schedule: 'every 5 minutes' }], /rate\(\.\.\.\) or cron/],
  ])('%s', (_label, background, message) => {
    expect(() => validateFunctionLists(HttpEndpoints, AuthorizerFunction.name, background as BackgroundFunction[], {})).toThrow(message);
  });

  test('a Lambda name over 64 characters', () => {
    expect(() => validateFunctionLists(HttpEndpoints, AuthorizerFunction.name, [queueFn({ name: 'x'.repeat(50) })], {}, 'interop-staging')).toThrow(
      /longer than 64/,
    );
  });

  test('an override for a function that is not in the list', () => {
    expect(() => validateFunctionLists(HttpEndpoints, AuthorizerFunction.name, [], { ghost: 2 })).toThrow(/not a background function/);
  });

  test('missing entry files are named in one message', () => {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const config = readStageConfig(app.node, {});
    expect(
      () =>
        new InteropStack(app, 'x', {
          config,
          env: { account: TEST_ACCOUNT, region: TEST_REGION },
          backgroundFunctions: [queueFn({ name: 'notWrittenYet' })],
        }),
    ).toThrow(/missing Lambda entry file\(s\)[\s\S]*functions\/notWrittenYet\.ts/);
  });
});

describe('stage configuration', () => {
  const read = (context: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => readStageConfig(new App({ context }).node, env);

  test('defaults: dev, us-east-1, no account, data destroyed with the stack', () => {
    expect(read({})).toMatchObject({ stage: 'dev', prefix: 'interop-dev', region: 'us-east-1', account: undefined, retainData: false, logRetentionDays: 30 });
  });

  test('account/region from context win over CDK_DEFAULT_*', () => {
    expect(read({ account: '111111111111', region: 'eu-central-1' }, { CDK_DEFAULT_ACCOUNT: '222222222222', CDK_DEFAULT_REGION: 'us-west-2' })).toMatchObject({
      account: '111111111111',
      region: 'eu-central-1',
    });
    expect(read({}, { CDK_DEFAULT_ACCOUNT: '222222222222', CDK_DEFAULT_REGION: 'us-west-2' })).toMatchObject({ account: '222222222222', region: 'us-west-2' });
  });

  test.each([
    [{ stage: 'Prod' }, /stage must match/],
    [{ logRetentionDays: '10' }, /logRetentionDays/],
    [{ anonRateLimit: '0' }, /positive integer/],
    [{ apiGatewayAccountRole: 'maybe' }, /true or false/],
    [{ account: '12' }, /12 digits/],
  ])('rejects %j', (context, message) => {
    expect(() => read(context)).toThrow(message);
  });
});
