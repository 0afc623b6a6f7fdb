/**
 * The partner-facing REST API: one method per entry of `HttpEndpoints`, every one behind the
 * REQUEST authorizer and `apiKeyRequired`, with the API key taken from the authorizer
 * (`apiKeySource: AUTHORIZER`), usage plans per partner tier plus the anonymous plan, problem+json
 * gateway responses, KMS-encrypted access/execution logs, X-Ray, and a WAF web ACL.
 *
 * How a request is metered: the authorizer (functions/authorizer.ts) always answers Allow and puts
 * its decision in the context. As `usageIdentifierKey` it returns the SHA-256 hex of the caller's
 * key when the key is valid, otherwise the anonymous plan's key. The gateway then applies that key's usage plan
 * (throttle/quota) and invokes the endpoint, whose pipeline renders 401/403/429 as problem+json
 * with x-ratelimit-* headers. So a partner key must exist twice: as a hash in the keys table
 * (what the authorizer checks) and as an API Gateway key in its tier's usage plan (what the
 * gateway meters) — `npm run keys` creates both.
 */
import { ArnFormat, Duration, NestedStack, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { allowedMethods, type HttpEndpoint } from '../lib/config/service';
import { PROBLEM_TYPE_BASE, ProblemTypes } from '../lib/http/problem';
import { API_SECURITY_POLICY, AnonymousTier, PartnerTiers, StaffTier, type PartnerTier, type StageConfig, type UsagePlanTier } from './config';
import { pascal } from './data-stores';
import { addGatewayProblems } from './gateway-responses';
import { acknowledge } from './nag';

export interface PartnerApiProps {
  config: StageConfig;
  key: kms.IKey;
  authorizerFunction: lambda.IFunction;
  endpoints: Array<{ endpoint: HttpEndpoint; fn: lambda.IFunction }>;
  anonymousKeyValue: string;
  /** value of the staff plan's key (config.staffUsageIdentifier) */
  staffKeyValue: string;
}

/**
 * Access log line: ids, route, status, timings and the authorizer's outcome. Deliberately absent:
 * `$context.identity.apiKey` (with apiKeySource AUTHORIZER that is the partner's secret key) and
 * anything from the query string or body (patient identifiers).
 */
export const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  xrayTraceId: '$context.xrayTraceId',
  requestTime: '$context.requestTimeEpoch',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationStatus: '$context.integration.status',
  integrationLatency: '$context.integration.latency',
  principalId: '$context.authorizer.principalId',
  authOutcome: '$context.authorizer.outcome',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
  errorType: '$context.error.responseType',
  errorMessage: '$context.error.message',
  wafResponseCode: '$context.wafResponseCode',
});

/** What the WAF logs never hold: both credentials (header names are matched lower-case) and the query string. */
export const WAF_REDACTED_FIELDS = [{ singleHeader: { Name: 'authorization' } }, { singleHeader: { Name: 'x-api-key' } }, { queryString: {} }];

export class PartnerApi extends Construct {
  readonly api: apigw.RestApi;
  readonly authorizer: apigw.RequestAuthorizer;
  readonly usagePlans = {} as Record<PartnerTier, apigw.UsagePlan>;
  readonly anonymousPlan: apigw.UsagePlan;
  readonly anonymousKey: apigw.ApiKey;
  readonly staffPlan: apigw.UsagePlan;
  readonly staffKey: apigw.ApiKey;
  readonly webAcl: wafv2.CfnWebACL;
  /** the JSON access log (ACCESS_LOG_FORMAT): the 429 and quota alarms count its lines */
  readonly accessLogs: logs.LogGroup;
  /** nested stack of the per-endpoint API resources, methods and invoke permissions */
  readonly endpointsStack: NestedStack;

  constructor(scope: Construct, id: string, props: PartnerApiProps) {
    super(scope, id);
    const { config, key } = props;
    const { prefix, stage } = config;
    const removalPolicy = config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const retention = config.logRetentionDays as logs.RetentionDays;

    const accessLogs = (this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      logGroupName: `/aws/apigateway/${prefix}-access`,
      encryptionKey: key,
      retention,
      removalPolicy,
    }));

    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: `${prefix}-api`,
      description: 'Clinical interoperability partner API (HL7 exports, lab result intake, form intake)',
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      apiKeySourceType: apigw.ApiKeySourceType.AUTHORIZER,
      // execution logging (ERROR level below) needs the account-wide API Gateway CloudWatch role
      cloudWatchRole: config.manageApiGatewayAccountRole,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: stage,
        tracingEnabled: true,
        metricsEnabled: true,
        // errors only, never request/response data (dataTrace would copy PHI into the logs)
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigw.AccessLogFormat.custom(ACCESS_LOG_FORMAT),
        throttlingRateLimit: config.stageRateLimit,
        throttlingBurstLimit: config.stageBurstLimit,
      },
    });

    // TLS 1.2 at least on the execute-api endpoint (the default for a regional API accepts TLS 1.0):
    // an enhanced security policy, which API Gateway only takes together with an endpoint access mode
    const cfnApi = this.api.node.defaultChild as apigw.CfnRestApi;
    cfnApi.securityPolicy = API_SECURITY_POLICY;
    cfnApi.endpointAccessMode = config.apiEndpointAccessMode;

    // API Gateway would create the execution log group itself, unencrypted and kept forever;
    // creating it first (same name) gives it the customer key and the stage's retention
    const executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${stage}`,
      encryptionKey: key,
      retention,
      removalPolicy,
    });
    this.api.deploymentStage.node.addDependency(executionLogs);

    const stageResource = this.api.deploymentStage.node.defaultChild as apigw.CfnStage;
    acknowledge(
      stageResource,
      'HIPAA.Security-APIGWCacheEnabledAndEncrypted',
      'Responses are per-caller PHI (HL7 exports) or writes; a stage cache would serve one caller data fetched under another key and would outlive revocation. Caching is off, so there is no cache to encrypt.',
    );
    acknowledge(
      stageResource,
      'HIPAA.Security-APIGWSSLEnabled',
      'A client certificate authenticates API Gateway to HTTP backends; every integration here is a Lambda proxy invoked through IAM, so there is no backend for a certificate to protect.',
    );
    acknowledge(
      this.api.node.defaultChild as apigw.CfnRestApi,
      'AwsSolutions-APIG2',
      'Requests are validated by each function against its own schema (lib/http pipeline) so that errors carry field-level problem+json details; a gateway validator would need a second copy of every schema.',
    );
    const cloudWatchRole = this.api.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      acknowledge(
        cloudWatchRole,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        'Account-wide role API Gateway uses to write execution/access logs for every API in the account and region; the AWS-managed policy is the documented one for that service role.',
      );
    }

    // ---- authorizer ----------------------------------------------------------------------------
    // No identity source: with one, the gateway itself answers 401 {"message":"Unauthorized"} when
    // x-api-key is missing, bypassing the problem+json shape, the anonymous rate limit and the
    // audit of the decision. Without one, API Gateway requires caching off (TTL 0), which we want
    // anyway: revocation takes effect on the next request and every request is counted.
    this.authorizer = new apigw.RequestAuthorizer(this, 'Authorizer', {
      authorizerName: `${prefix}-api-key`,
      handler: props.authorizerFunction,
      identitySources: [],
      resultsCacheTtl: Duration.seconds(0),
    });
    // CDK renders an empty list as IdentitySource: ""; leave the property out instead
    (this.authorizer.node.defaultChild as apigw.CfnAuthorizer).addPropertyDeletionOverride('IdentitySource');

    // ---- the per-endpoint resources, in a nested stack ----------------------------------------
    // Every endpoint adds an API resource, its method, the 405 ANY method and the function's invoke
    // permission. They live in `PartnerApi/Endpoints` (infra/README.md, "Stack layout") so that the
    // stage's stack does not grow with the endpoint list; the REST API, its deployment and stage,
    // the authorizer, usage plans, keys and WAF stay in the stage's stack. The deployment depends on
    // the nested stack (CDK adds the dependency for every method) and its logical id still hashes
    // every method, so a changed method is deployed.
    this.endpointsStack = new NestedStack(this, 'Endpoints', { description: `API resources, methods and invoke permissions of ${prefix}` });
    const resourceFor = (path: string): apigw.IResource => {
      const [first, ...rest] = path.split('/').filter(Boolean);
      // a method on the root itself (none today) belongs to the root resource, in the stage's stack
      if (!first) return this.api.root;
      // top-level path parts are created in the nested stack; CDK creates the deeper ones as
      // children of their parent resource, so they follow it there
      const top =
        this.api.root.getResource(first) ??
        new apigw.Resource(this.endpointsStack, `Path${pascal(first.replace(/[^A-Za-z0-9]+/g, '-'))}`, { parent: this.api.root, pathPart: first });
      return rest.length ? top.resourceForPath(rest.join('/')) : top;
    };

    // ---- one method per endpoint of the list -------------------------------------------------
    for (const { endpoint, fn } of props.endpoints) {
      const method = resourceFor(endpoint.path).addMethod(endpoint.method, lambdaProxy(fn), {
        operationName: endpoint.name,
        authorizationType: apigw.AuthorizationType.CUSTOM,
        authorizer: this.authorizer,
        apiKeyRequired: true,
        requestParameters: { 'method.request.header.x-request-id': false },
      });
      // only this method of this stage may invoke the function. The stage is named by its literal
      // name: a reference to the stage resource would make the nested stack depend on the stage,
      // which depends on the deployment, which depends on the nested stack
      fn.addPermission(`ApiPermission${pascal(endpoint.name)}`, {
        scope: method,
        principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: this.api.arnForExecuteApi(endpoint.method, endpoint.path.replace(/\{[^}]+\}/g, '*'), stage),
      });
      acknowledge(
        method,
        'AwsSolutions-COG4',
        'Callers are partner systems authenticated by API key in the custom REQUEST authorizer (hashed key lookup, scopes, partner policy, rate limit), not end users with Cognito identities.',
      );
    }

    // ---- 405 for every other method on a path of the list -----------------------------------
    // API Gateway itself answers an undefined method with MISSING_AUTHENTICATION_TOKEN (a 404 here).
    // An ANY method (explicit methods take precedence over it) with a MOCK integration answers 405,
    // problem+json, and the same `Allow` header as the local gateway (lib/local/api-gateway.ts).
    // No function runs, nothing is read or written, so it needs neither authorizer nor key.
    for (const path of [...new Set(props.endpoints.map(({ endpoint }) => endpoint.path))]) {
      const any = resourceFor(path).addMethod('ANY', methodNotAllowedIntegration(allowedMethods(path)), {
        operationName: `methodNotAllowed${pascal(path.replace(/[^A-Za-z0-9]+/g, '-'))}`,
        authorizationType: apigw.AuthorizationType.NONE,
        apiKeyRequired: false,
        methodResponses: [{ statusCode: '405', responseParameters: methodNotAllowedResponseParameters(true) }],
      });
      for (const [rule, reason] of [
        [
          'AwsSolutions-APIG4',
          'The ANY method only answers 405 from a MOCK integration for methods the API does not define; no function runs and no data is read, so there is nothing to authorize.',
        ],
        [
          'AwsSolutions-COG4',
          'The ANY method only answers 405 from a MOCK integration for methods the API does not define; no function runs and no data is read, so there is nothing to authorize.',
        ],
      ] as const) {
        acknowledge(any, rule, reason);
      }
    }

    addGatewayProblems(this.api);

    // ---- usage plans -------------------------------------------------------------------------
    const apiStages = [{ api: this.api, stage: this.api.deploymentStage }];
    const plan = (id: string, name: string, tier: UsagePlanTier) =>
      this.api.addUsagePlan(id, {
        name,
        description: tier.description,
        throttle: { rateLimit: tier.rateLimit, burstLimit: tier.burstLimit },
        quota: tier.monthlyQuota ? { limit: tier.monthlyQuota, period: apigw.Period.MONTH } : undefined,
        apiStages,
      });
    for (const [tier, settings] of Object.entries(PartnerTiers) as Array<[PartnerTier, UsagePlanTier]>) {
      this.usagePlans[tier] = plan(`UsagePlan${pascal(tier)}`, `${prefix}-${tier}`, settings);
    }
    this.anonymousPlan = plan('UsagePlanAnonymous', `${prefix}-anonymous`, AnonymousTier);
    this.anonymousKey = new apigw.ApiKey(this, 'AnonymousKey', {
      apiKeyName: `${prefix}-anonymous`,
      description: 'Meters requests without a usable API key (named by the authorizer, never by callers)',
      value: props.anonymousKeyValue,
      enabled: true,
    });
    this.anonymousPlan.addApiKey(this.anonymousKey);
    // staff (inbox page, staff ID token) on their own plan: an anonymous flood cannot throttle them
    this.staffPlan = plan('UsagePlanStaff', `${prefix}-staff`, { ...StaffTier, rateLimit: config.staffRateLimit, burstLimit: config.staffBurstLimit });
    this.staffKey = new apigw.ApiKey(this, 'StaffKey', {
      apiKeyName: `${prefix}-staff`,
      description: 'Meters requests authenticated with a staff ID token (named by the authorizer, never by callers)',
      value: props.staffKeyValue,
      enabled: true,
    });
    this.staffPlan.addApiKey(this.staffKey);

    // ---- WAF ---------------------------------------------------------------------------------
    this.webAcl = this.buildWebAcl(config, key);
  }

  private buildWebAcl(config: StageConfig, key: kms.IKey): wafv2.CfnWebACL {
    const { prefix } = config;
    // sampled requests would keep full headers (x-api-key) visible in the console: off
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: false });
    const managed = (name: string, priority: number) => ({
      name,
      priority,
      overrideAction: { none: {} },
      statement: { managedRuleGroupStatement: { vendorName: 'AWS', name } },
      visibilityConfig: visibility(`${prefix}-${name}`),
    });
    const acl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name: `${prefix}-api`,
      description: 'Per-IP rate limit and AWS managed bad-input / IP-reputation rules in front of the partner API',
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(`${prefix}-api`),
      customResponseBodies: {
        rateLimited: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({ type: '/problems/rate-limited', title: 'Too many requests', status: 429, detail: 'Too many requests from this address.' }),
        },
      },
      rules: [
        {
          // a flood from one address is stopped before it reaches the authorizer (which writes a
          // rate-limit counter per request)
          name: 'RequestsPerIp',
          priority: 0,
          action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: 'rateLimited' } } },
          statement: { rateBasedStatement: { limit: config.wafRequestsPerIpPer5Min, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: visibility(`${prefix}-requests-per-ip`),
        },
        // not the Common rule set: its 8 KB body-size rule would block lab results with documents
        managed('AWSManagedRulesKnownBadInputsRuleSet', 1),
        managed('AWSManagedRulesAmazonIpReputationList', 2),
      ],
    });
    const association = new wafv2.CfnWebACLAssociation(this, 'WebAclAssociation', { resourceArn: this.api.deploymentStage.stageArn, webAclArn: acl.attrArn });
    association.node.addDependency(this.api.deploymentStage);

    // WAF logs go to a log group whose name must start with aws-waf-logs-
    const wafLogsName = `aws-waf-logs-${prefix}`;
    const wafLogs = new logs.LogGroup(this, 'WafLogs', {
      logGroupName: wafLogsName,
      encryptionKey: key,
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    const logging = new wafv2.CfnLoggingConfiguration(this, 'WafLogging', {
      resourceArn: acl.attrArn,
      // WAF wants the log group ARN without the trailing ":*"
      logDestinationConfigs: [
        Stack.of(this).formatArn({ service: 'logs', resource: 'log-group', resourceName: wafLogsName, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      ],
      // the partner's secret key, the staff ID token and the query string (patient identifiers)
      // never reach the WAF logs
      redactedFields: WAF_REDACTED_FIELDS,
    });
    logging.node.addDependency(wafLogs);
    return acl;
  }
}

/**
 * Lambda proxy integration without the permission `LambdaIntegration` would add (it scopes that to
 * the stage resource, which the nested endpoints stack cannot reference; see PartnerApi).
 */
function lambdaProxy(fn: lambda.IFunction): apigw.AwsIntegration {
  return new apigw.AwsIntegration({ proxy: true, service: 'lambda', path: `2015-03-31/functions/${fn.functionArn}/invocations` });
}

function methodNotAllowedResponseParameters(declare: true): Record<string, boolean>;
function methodNotAllowedResponseParameters(declare: false, allow: string[]): Record<string, string>;
function methodNotAllowedResponseParameters(declare: boolean, allow: string[] = []): Record<string, boolean | string> {
  const values: Record<string, string> = {
    Allow: `'${allow.join(', ')}'`,
    'Content-Type': "'application/problem+json'",
    'Cache-Control': "'no-store'",
    'X-Content-Type-Options': "'nosniff'",
  };
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [`method.response.header.${name}`, declare ? true : value]));
}

/** The 405 problem+json body of the ANY mock method (`requestId` is the gateway's request id). */
export function methodNotAllowedBody(): string {
  const t = ProblemTypes.methodNotAllowed;
  return JSON.stringify({
    type: PROBLEM_TYPE_BASE + t.slug,
    title: t.title,
    status: t.status,
    detail: 'method not allowed here; see the Allow header',
    requestId: '$context.requestId',
  });
}

/** Content types the 405 mock answers for (the API's own types plus the common ones of wrong calls). */
export const METHOD_NOT_ALLOWED_CONTENT_TYPES = [
  'application/json',
  'application/hl7-v2',
  'text/plain',
  'application/xml',
  'text/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/octet-stream',
] as const;

/** MOCK integration answering 405 with `Allow` for the methods a path defines. */
export function methodNotAllowedIntegration(allow: string[]): apigw.MockIntegration {
  return new apigw.MockIntegration({
    // a request without Content-Type counts as application/json; a body of a type not listed here
    // meets passthrough NEVER and gets the gateway's 415 instead (README, "Methods")
    requestTemplates: Object.fromEntries(METHOD_NOT_ALLOWED_CONTENT_TYPES.map((type) => [type, '{"statusCode": 405}'])),
    passthroughBehavior: apigw.PassthroughBehavior.NEVER,
    integrationResponses: [
      {
        statusCode: '405',
        responseParameters: methodNotAllowedResponseParameters(false, allow),
        responseTemplates: { 'application/json': methodNotAllowedBody() },
      },
    ],
  });
}
