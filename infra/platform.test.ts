/* eslint-disable @typescript-eslint/no-explicit-any -- the synthesised CloudFormation template is untyped JSON */
/**
 * Issue 28, items 1, 3, 6 and 9, on the synthesized templates:
 * - `npm run synth` works offline, with no account and no credentials (run exactly as documented);
 *   so does `cdk synth -c stage=prod`;
 * - TLS 1.2 at least on every API entry point; WAF logs redact both credentials; staff on their own
 *   usage plan;
 * - every queue with a consumer: visibility timeout at least 6x the consumer's timeout;
 * - a template synthesized without `-c stage` cannot be deployed; backups: vault lock, optional copy,
 *   an alarm on failed jobs.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { AuthorizerFunction, BackgroundFunctions, type BackgroundFunction } from '../lib/config/service';
import { STAFF_USAGE_IDENTIFIER_ENV } from '../lib/keys/access-wiring';
import { AnonymousTier, StaffTier, TLS12_OR_LATER_POLICIES, anonymousUsageIdentifier, readStageConfig, staffUsageIdentifier } from './config';
import { VISIBILITY_TIMEOUT_FACTOR } from './data-stores';
import { EXPLICIT_STAGE_PARAMETER, EXPLICIT_STAGE_RULE } from './interop-stack';
import { REPO_ROOT } from './service-function';
import { buildStageApp } from './stage-app';
import { asArray, cdkJsonContext, refOf, removeAssembly, resourcesOfType, synthesize, type CfnTemplate, type Synthesized } from './testing';

/** the environment of `env -u AWS_... -u CDK_DEFAULT_ACCOUNT npm run synth`: nothing of AWS or CDK */
function offlineEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(AWS_|CDK_)/.test(k)));
}

describe('item 1: synthesis offline, no account, no credentials', () => {
  let outdir: string;
  let stderr = '';
  let template: CfnTemplate & { Rules?: Record<string, any>; Parameters?: Record<string, any> };
  beforeAll(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-npm-synth-'));
    // exactly `npm run synth` (= cdk synth --quiet, bundling every function, cdk-nag as validation),
    // only the assembly directory moved out of the worktree
    const result = (() => {
      try {
        return {
          stderr: execFileSync('npm', ['run', '-s', 'synth', '--', '-o', outdir], { cwd: REPO_ROOT, env: offlineEnv(), encoding: 'utf8', stdio: 'pipe' }),
        };
      } catch (e) {
        const err = e as { stdout?: string; stderr?: string; status?: number };
        throw new Error(`npm run synth failed (exit ${err.status}):\n${err.stdout ?? ''}\n${err.stderr ?? ''}`, { cause: e });
      }
    })();
    stderr = result.stderr;
    template = JSON.parse(fs.readFileSync(path.join(outdir, 'interop-dev.template.json'), 'utf8'));
  }, 600_000);
  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

  test('npm run synth succeeds; the template is account-agnostic', () => {
    expect(typeof stderr).toBe('string');
    expect(JSON.stringify(template)).not.toMatch(/\b\d{12}\b/);
  });

  test('the Cognito domain prefix is resolved by CloudFormation from the account id, not lower-cased at synthesis', () => {
    const [[, domain]] = resourcesOfType(template, 'AWS::Cognito::UserPoolDomain') as [[string, any]];
    expect(domain.Properties.Domain).toEqual({ 'Fn::Join': ['', ['interop-dev-staff-', { Ref: 'AWS::AccountId' }]] });
  });

  test('without -c stage the template carries the rule that refuses its deployment', () => {
    expect(template.Rules?.[EXPLICIT_STAGE_RULE]).toBeDefined();
  });

  test('cdk synth -c stage=prod works offline too (in-process, as infra/app.ts builds it; bundling skipped)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-prod-synth-'));
    try {
      const app = new App({ context: { ...cdkJsonContext(), stage: 'prod', 'aws:cdk:bundling-stacks': [] }, outdir: dir });
      const stack = buildStageApp(app, offlineEnv());
      expect(stack.config.account).toBeUndefined();
      // throws on a CDK validation error or an unacknowledged cdk-nag finding
      const assembly = app.synth();
      const prod = assembly.getStackByName('interop-prod').template as CfnTemplate & { Rules?: Record<string, unknown> };
      expect(prod.Rules?.[EXPLICIT_STAGE_RULE]).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('item 1: the staff sign-in domain prefix', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize({ bundle: false, context: { stage: 'dev' } });
  });
  afterAll(() => removeAssembly(s));

  test('with an account: interop-<stage>-staff-<account>, as before', () => {
    s.template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { Domain: 'interop-dev-staff-123456789012' });
  });

  test('-c staffDomainPrefix replaces it; a prefix Cognito would refuse is refused at synthesis', () => {
    const own = synthesize({ bundle: false, context: { staffDomainPrefix: 'clinic-interop-signin' } });
    try {
      own.template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { Domain: 'clinic-interop-signin' });
    } finally {
      removeAssembly(own);
    }
    for (const bad of ['Upper', 'my-aws-signin', '-x', 'a'.repeat(64)]) {
      expect(() => readStageConfig(new App({ context: { staffDomainPrefix: bad } }).node, {})).toThrow(/staffDomainPrefix/);
    }
  });
});

describe('item 3: TLS, WAF log redaction, staff usage plan', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize({ bundle: false, context: { stage: 'prod', alarmEmail: 'oncall@example.org' } });
  });
  afterAll(() => removeAssembly(s));
  const PREFIX = 'interop-prod';

  test('every API entry point accepts TLS 1.2 at least: the REST API and any custom domain', () => {
    const apis = resourcesOfType(s.json, 'AWS::ApiGateway::RestApi');
    expect(apis.length).toBeGreaterThan(0);
    for (const [id, api] of apis) {
      expect({ id, tls12OrLater: TLS12_OR_LATER_POLICIES.includes(api.Properties!.SecurityPolicy) }).toEqual({ id, tls12OrLater: true });
      // API Gateway takes an enhanced policy only with an endpoint access mode
      if (String(api.Properties!.SecurityPolicy).startsWith('SecurityPolicy_')) expect(['BASIC', 'STRICT']).toContain(api.Properties!.EndpointAccessMode);
    }
    for (const [, domain] of resourcesOfType(s.json, 'AWS::ApiGateway::DomainName'))
      expect(TLS12_OR_LATER_POLICIES).toContain(domain.Properties!.SecurityPolicy);
    for (const [, domain] of resourcesOfType(s.json, 'AWS::ApiGatewayV2::DomainName')) {
      for (const c of asArray(domain.Properties!.DomainNameConfigurations as any[])) expect(c.SecurityPolicy).toBe('TLS_1_2');
    }
    // no HTTP API (whose default endpoint has no security policy) exists
    expect(resourcesOfType(s.json, 'AWS::ApiGatewayV2::Api')).toEqual([]);
  });

  test('-c apiEndpointAccessMode=STRICT is passed on; other values are refused', () => {
    const strict = synthesize({ bundle: false, context: { apiEndpointAccessMode: 'STRICT' } });
    try {
      strict.template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointAccessMode: 'STRICT' });
    } finally {
      removeAssembly(strict);
    }
    expect(() => readStageConfig(new App({ context: { apiEndpointAccessMode: 'LAX' } }).node, {})).toThrow(/apiEndpointAccessMode/);
  });

  test('WAF logs redact the authorization and x-api-key headers and the query string', () => {
    const [[, logging]] = resourcesOfType(s.json, 'AWS::WAFv2::LoggingConfiguration') as [[string, any]];
    const redacted = logging.Properties.RedactedFields as any[];
    const headers = redacted.filter((f) => f.SingleHeader).map((f) => String(f.SingleHeader.Name).toLowerCase());
    expect(headers).toEqual(expect.arrayContaining(['authorization', 'x-api-key']));
    expect(redacted).toContainEqual({ QueryString: {} });
  });

  test('staff requests are metered on their own plan and key, with their own throttle, never on the anonymous plan', () => {
    const plans = new Map(resourcesOfType(s.json, 'AWS::ApiGateway::UsagePlan').map(([id, p]) => [p.Properties!.UsagePlanName, { id, p: p.Properties! }]));
    const staff = plans.get(`${PREFIX}-staff`)!;
    const anon = plans.get(`${PREFIX}-anonymous`)!;
    expect(staff).toBeDefined();
    expect(staff.p.Throttle).toEqual({ RateLimit: StaffTier.rateLimit, BurstLimit: StaffTier.burstLimit });
    expect(staff.p.Throttle).not.toEqual({ RateLimit: AnonymousTier.rateLimit, BurstLimit: AnonymousTier.burstLimit });
    expect(staff.p.Quota).toBeUndefined();
    const keys = new Map(resourcesOfType(s.json, 'AWS::ApiGateway::ApiKey').map(([id, k]) => [id, k.Properties!.Value]));
    const planKeys = resourcesOfType(s.json, 'AWS::ApiGateway::UsagePlanKey').map(([, k]) => ({
      plan: refOf(k.Properties!.UsagePlanId),
      key: keys.get(refOf(k.Properties!.KeyId)!),
    }));
    expect(planKeys).toContainEqual({ plan: staff.id, key: staffUsageIdentifier(PREFIX) });
    expect(planKeys).toContainEqual({ plan: anon.id, key: anonymousUsageIdentifier(PREFIX) });
    expect(planKeys.filter((k) => k.key === staffUsageIdentifier(PREFIX))).toHaveLength(1);
    // the authorizer names exactly that key for staff
    const authorizer = s.json.Resources[s.stack.getLogicalId(s.stack.functions[AuthorizerFunction.name]!.fn.node.defaultChild as never)]!;
    expect(authorizer.Properties!.Environment.Variables[STAFF_USAGE_IDENTIFIER_ENV]).toBe(staffUsageIdentifier(PREFIX));
    expect(s.json.Outputs?.UsagePlanIdStaff?.Value).toEqual({ Ref: staff.id });
  });

  test('-c staffRateLimit / -c staffBurstLimit set the staff throttle', () => {
    const tuned = synthesize({ bundle: false, context: { staffRateLimit: '80', staffBurstLimit: '160' } });
    try {
      tuned.template.hasResourceProperties('AWS::ApiGateway::UsagePlan', { UsagePlanName: 'interop-dev-staff', Throttle: { RateLimit: 80, BurstLimit: 160 } });
    } finally {
      removeAssembly(tuned);
    }
  });
});

/** queue logical id -> [queue visibility timeout, consumer function timeout], from the event source mappings of a template */
function consumedQueues(json: CfnTemplate): Array<{ queue: string; visibility: number; consumerTimeout: number }> {
  return resourcesOfType(json, 'AWS::Lambda::EventSourceMapping').map(([, m]) => {
    const queue = refOf(m.Properties!.EventSourceArn)!;
    const fn = json.Resources[refOf(m.Properties!.FunctionName)!]!;
    return { queue, visibility: json.Resources[queue]!.Properties!.VisibilityTimeout, consumerTimeout: fn.Properties!.Timeout };
  });
}

describe('item 6: visibility timeouts at least 6x the consumer timeout', () => {
  test('every queue with a consumer, on the lists of lib/config/service.ts', () => {
    const s = synthesize({ bundle: false });
    try {
      const consumed = consumedQueues(s.json);
      expect(consumed).toHaveLength(BackgroundFunctions.filter((b) => b.kind === 'queue').length);
      for (const c of consumed) expect({ ...c, ok: c.visibility >= VISIBILITY_TIMEOUT_FACTOR * c.consumerTimeout }).toEqual({ ...c, ok: true });
      expect(VISIBILITY_TIMEOUT_FACTOR).toBeGreaterThanOrEqual(6);
    } finally {
      removeAssembly(s);
    }
  });

  test('a consumer with a longer timeout raises its queue accordingly', () => {
    const slower: BackgroundFunction[] = BackgroundFunctions.map((b) => (b.name === 'matchFormPackets' ? { ...b, timeoutSeconds: 90 } : b));
    const s = synthesize({ bundle: false, props: { backgroundFunctions: slower } });
    try {
      const matching = s.json.Resources[s.stack.getLogicalId(s.stack.data.queues.matching.node.defaultChild as never)]!;
      expect(matching.Properties!.VisibilityTimeout).toBe(540);
      for (const c of consumedQueues(s.json)) expect(c.visibility).toBeGreaterThanOrEqual(6 * c.consumerTimeout);
    } finally {
      removeAssembly(s);
    }
  });
});

describe('item 9: deploying needs an explicit stage', () => {
  test('without -c stage: a rule that can never hold, on a parameter that allows only "no"', () => {
    const s = synthesize({ bundle: false });
    try {
      const json = s.json as CfnTemplate & { Rules?: Record<string, any>; Parameters?: Record<string, any> };
      expect(s.stack.config.stageExplicit).toBe(false);
      const parameter = json.Parameters![EXPLICIT_STAGE_PARAMETER];
      expect(parameter).toMatchObject({ Type: 'String', Default: 'no', AllowedValues: ['no'] });
      const [assertion] = json.Rules![EXPLICIT_STAGE_RULE].Assertions;
      expect(assertion.Assert).toEqual({ 'Fn::Equals': [{ Ref: EXPLICIT_STAGE_PARAMETER }, 'yes'] });
      expect(assertion.AssertDescription).toMatch(/-c stage=/);
    } finally {
      removeAssembly(s);
    }
  });

  test.each(['dev', 'prod'])('with -c stage=%s: no such rule or parameter', (stage) => {
    const s = synthesize({ bundle: false, context: { stage, alarmEmail: 'oncall@example.org' } });
    try {
      const json = s.json as CfnTemplate & { Rules?: Record<string, unknown> };
      expect(s.stack.config.stageExplicit).toBe(true);
      expect(json.Rules?.[EXPLICIT_STAGE_RULE]).toBeUndefined();
      expect(json.Parameters?.[EXPLICIT_STAGE_PARAMETER]).toBeUndefined();
    } finally {
      removeAssembly(s);
    }
  });
});

describe('item 9: backups', () => {
  const COPY_VAULT = 'arn:aws:backup:eu-central-1:210987654321:backup-vault:interop-prod-copies';
  let prod: Synthesized;
  let dev: Synthesized;
  beforeAll(() => {
    prod = synthesize({ bundle: false, context: { stage: 'prod', alarmEmail: 'oncall@example.org', backupCopyVaultArn: COPY_VAULT } });
    dev = synthesize({ bundle: false, context: { stage: 'dev' } });
  });
  afterAll(() => {
    removeAssembly(prod);
    removeAssembly(dev);
  });
  const vaultOf = (s: Synthesized) => (resourcesOfType(s.json, 'AWS::Backup::BackupVault') as Array<[string, any]>)[0]!;
  const ruleOf = (s: Synthesized) =>
    (resourcesOfType(s.json, 'AWS::Backup::BackupPlan') as Array<[string, any]>)[0]![1].Properties.BackupPlan.BackupPlanRule[0];

  test('prod: the vault is locked (governance mode) for the backups retention; dev is not', () => {
    expect(vaultOf(prod)[1].Properties.LockConfiguration).toEqual({ MinRetentionDays: 35 });
    expect(ruleOf(prod).Lifecycle.DeleteAfterDays).toBe(35);
    expect(vaultOf(dev)[1].Properties.LockConfiguration).toBeUndefined();
  });

  test('-c backupVaultLockChangeableForDays: compliance mode after the grace period; below 3 days refused', () => {
    const s = synthesize({ bundle: false, context: { stage: 'prod', alarmEmail: 'oncall@example.org', backupVaultLockChangeableForDays: '3' } });
    try {
      expect(vaultOf(s)[1].Properties.LockConfiguration).toEqual({ MinRetentionDays: 35, ChangeableForDays: 3 });
    } finally {
      removeAssembly(s);
    }
    expect(() => readStageConfig(new App({ context: { backupVaultLockChangeableForDays: '2' } }).node, {})).toThrow(/3 or more/);
  });

  test('-c backupCopyVaultArn: every daily backup is copied there; without it, no copy', () => {
    expect(ruleOf(prod).CopyActions).toEqual([{ DestinationBackupVaultArn: COPY_VAULT, Lifecycle: { DeleteAfterDays: 35 } }]);
    expect(ruleOf(dev).CopyActions).toBeUndefined();
    expect(() => readStageConfig(new App({ context: { backupCopyVaultArn: 'interop-prod-copies' } }).node, {})).toThrow(/backupCopyVaultArn/);
  });

  test('an alarm on failed, aborted or expired backup jobs and failed copy jobs of the vault, in the nested alarms stack, to the alarm topic', () => {
    const [vaultId] = vaultOf(prod);
    const topicId = prod.stack.getLogicalId(prod.stack.alarms.topic.node.defaultChild as never);
    const alarms = resourcesOfType(prod.alarms.json, 'AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties!.AlarmName === 'interop-prod-backup-jobs-failed');
    expect(alarms).toHaveLength(1);
    const alarm = alarms[0]![1].Properties!;
    expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
    const metrics = (alarm.Metrics as any[]).filter((m) => m.MetricStat).map((m) => m.MetricStat.Metric);
    expect(metrics.map((m) => m.MetricName).sort()).toEqual(
      ['NumberOfBackupJobsAborted', 'NumberOfBackupJobsExpired', 'NumberOfBackupJobsFailed', 'NumberOfCopyJobsFailed'].sort(),
    );
    for (const m of metrics) {
      expect(m.Namespace).toBe('AWS/Backup');
      expect(refOf(m.Dimensions.find((d: any) => d.Name === 'BackupVaultName').Value)).toBe(vaultId);
    }
    expect(alarm.Threshold).toBe(0);
    // it lives with the other alarms, not in the parent
    expect(resourcesOfType(prod.json, 'AWS::CloudWatch::Alarm')).toEqual([]);
  });
});
