/* eslint-disable @typescript-eslint/no-explicit-any -- the synthesised CloudFormation template is untyped JSON */
/**
 * Headroom under CloudFormation's per-stack limits (500 resources, 200 parameters, 200 outputs,
 * 1 MB template from S3; a nested stack has the same limits as any stack) and the stack layout that keeps it
 * (infra/README.md, "Stack layout"):
 * - the stage's stack: functions, roles, log groups, data stores, the REST API itself (deployment,
 *   stage, authorizer, usage plans, keys, WAF, gateway responses), sign-in, the alarm topic;
 * - `PartnerApi/Endpoints` (nested): the per-endpoint API resources, methods and invoke permissions;
 * - `Alarms/Stack` (nested): the alarms, their metric filters and the dashboard.
 * Bundling is skipped: only the template shape counts here.
 *
 * Every stack, nested ones included (found in the construct tree, so a new nested stack is covered
 * without an edit here), must stay at or below 350 resources, 70 % of the limit: a failing test
 * leaves room to split again before CloudFormation refuses a deployment. The layout aims at 300 or
 * fewer with today's lists; the counts and the room left are printed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { BackgroundFunctions, HttpEndpoints, Scopes, type HttpEndpoint } from '../lib/config/service';
import { DEFAULT_FUNCTIONS_DIR, entryPath } from './service-function';
import { asArray, logicalIdOf, refsIn, removeAssembly, resourcesOfType, synthesize, type CfnTemplate, type Synthesized } from './testing';

const STUB = path.join(__dirname, 'test-fixtures', 'stub-handler.ts');

/** CloudFormation's limits per stack (nested stacks included) */
const MAX_RESOURCES = 500;
const MAX_PARAMETERS = 200;
const MAX_OUTPUTS = 200;
/** a template uploaded to S3 (what cdk deploy does with every one of these) */
const MAX_TEMPLATE_BYTES = 1_000_000;
/** what the tests allow for every stack */
const RESOURCE_BUDGET = 350;
const PARAMETER_BUDGET = 180;
const OUTPUT_BUDGET = 180;
const TEMPLATE_BYTES_BUDGET = 700_000;
/** what the layout aims at with today's lists (printed, not enforced): room for the next endpoints without a split */
const RESOURCE_TARGET = 300;
/** every stack must take this many more endpoints (each on a new top-level path) below CloudFormation's limit */
const MORE_ENDPOINTS = 10;

/** made-up endpoints, each on a new top-level path (a new API resource, its method and the 405 ANY method) */
const probes = (count: number): HttpEndpoint[] =>
  Array.from({ length: count }, (_, i) => ({
    kind: 'http',
    name: `headroomProbe${i}`,
    method: 'GET',
    path: `/headroomProbe${i}`,
    scope: Scopes.inboxRead,
    needs: { tables: { forms: ['GetItem'] } },
    memoryMb: 128,
    timeoutSeconds: 10,
  }));

interface StackCount {
  path: string;
  resources: number;
  parameters: number;
  outputs: number;
  /** size of the template file cdk writes (and uploads) */
  bytes: number;
}
/** every stack of the stage, the parent first, by construct path */
function countStacks(s: Synthesized): StackCount[] {
  const stacks: Stack[] = [s.stack, ...s.app.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c))];
  return stacks.map((stack) => {
    const t = Template.fromStack(stack).toJSON() as CfnTemplate & { Outputs?: Record<string, unknown> };
    return {
      path: stack === s.stack ? stack.stackName : stack.node.path.slice(s.stack.node.path.length + 1),
      resources: Object.keys(t.Resources).length,
      parameters: Object.keys(t.Parameters ?? {}).length,
      outputs: Object.keys(t.Outputs ?? {}).length,
      bytes: fs.statSync(path.join(s.outdir, stack.templateFile)).size,
    };
  });
}
const deploymentId = (s: Synthesized) => resourcesOfType(s.json, 'AWS::ApiGateway::Deployment').map(([id]) => id);

describe('stack limits and layout on the prod stage', () => {
  const context = { stage: 'prod', alarmEmail: 'oncall@example.org' };
  let s: Synthesized;
  let today: StackCount[];
  let more: StackCount[];
  let grownDeployment: string[];
  beforeAll(() => {
    s = synthesize({ context, bundle: false });
    today = countStacks(s);
    const extra = probes(MORE_ENDPOINTS);
    const names = new Set(extra.map((e) => e.name));
    const grown = synthesize({
      context,
      bundle: false,
      props: { httpEndpoints: [...HttpEndpoints, ...extra], entryFor: (name) => (names.has(name) ? STUB : entryPath(DEFAULT_FUNCTIONS_DIR, name)) },
    });
    try {
      more = countStacks(grown);
      grownDeployment = deploymentId(grown);
    } finally {
      removeAssembly(grown);
    }
    const lines = today.map((t, i) => {
      const perEndpoint = (more[i]!.resources - t.resources) / MORE_ENDPOINTS;
      const room = (limit: number) => (perEndpoint > 0 ? Math.floor((limit - t.resources) / perEndpoint) : Infinity);
      return `${t.path}: ${t.resources} resources, ${t.parameters} parameters, ${t.outputs} outputs, ${Math.round(t.bytes / 1000)} kB; +${perEndpoint} resources per endpoint; room for ${room(RESOURCE_TARGET)} more endpoints within ${RESOURCE_TARGET}, ${room(RESOURCE_BUDGET)} within ${RESOURCE_BUDGET}`;
    });
    console.log(
      [
        `${HttpEndpoints.length} endpoints, ${BackgroundFunctions.length} background functions`,
        ...lines,
        `with ${MORE_ENDPOINTS} more endpoints: ${more.map((m) => `${m.path} ${m.resources} (${Math.round(m.bytes / 1000)} kB)`).join(', ')}`,
      ].join('\n'),
    );
  }, 300_000);
  afterAll(() => removeAssembly(s));

  test('the stage is the parent and two nested stacks (endpoints, alarms)', () => {
    expect(today.map((t) => t.path).sort()).toEqual(['Alarms/Stack', 'PartnerApi/Endpoints', 'interop-prod'].sort());
  });

  test(`every stack stays within ${RESOURCE_BUDGET} resources, ${PARAMETER_BUDGET} parameters, ${OUTPUT_BUDGET} outputs and a ${TEMPLATE_BYTES_BUDGET / 1000} kB template`, () => {
    for (const t of today) {
      expect({
        stack: t.path,
        resources: t.resources,
        parameters: t.parameters <= PARAMETER_BUDGET,
        outputs: t.outputs <= OUTPUT_BUDGET,
        bytes: t.bytes <= TEMPLATE_BYTES_BUDGET,
      }).toEqual({
        stack: t.path,
        resources: Math.min(t.resources, RESOURCE_BUDGET),
        parameters: true,
        outputs: true,
        bytes: true,
      });
    }
  });

  test(`${MORE_ENDPOINTS} more endpoints still fit every stack within CloudFormation's limits (${MAX_RESOURCES} resources, ${MAX_PARAMETERS} parameters and outputs, 1 MB)`, () => {
    expect(more.map((m) => m.path)).toEqual(today.map((t) => t.path));
    for (const m of more) {
      expect({
        stack: m.path,
        resources: m.resources < MAX_RESOURCES,
        parameters: m.parameters < MAX_PARAMETERS,
        outputs: m.outputs < MAX_OUTPUTS,
        bytes: m.bytes < MAX_TEMPLATE_BYTES,
      }).toEqual({
        stack: m.path,
        resources: true,
        parameters: true,
        outputs: true,
        bytes: true,
      });
    }
    const grew = (p: string) => more.find((m) => m.path === p)!.resources - today.find((t) => t.path === p)!.resources;
    // each endpoint costs the parent its function, role, policy and log group
    expect(grew('interop-prod')).toBe(4 * MORE_ENDPOINTS);
    // the endpoints stack its API resource, method, 405 ANY method and invoke permission
    expect(grew('PartnerApi/Endpoints')).toBe(4 * MORE_ENDPOINTS);
    // the alarms stack its 3 function alarms, its handled-5xx alarm and that alarm's metric filter
    expect(grew('Alarms/Stack')).toBe(5 * MORE_ENDPOINTS);
  });

  test('the endpoints stack holds exactly the API resources, methods and invoke permissions; the parent none of them', () => {
    expect(new Set(Object.values(s.endpoints.raw.Resources).map((r) => r.Type))).toEqual(
      new Set(['AWS::ApiGateway::Resource', 'AWS::ApiGateway::Method', 'AWS::Lambda::Permission']),
    );
    expect(resourcesOfType(s.json, 'AWS::ApiGateway::Method')).toEqual([]);
    expect(resourcesOfType(s.json, 'AWS::ApiGateway::Resource')).toEqual([]);
    // left in the parent: the authorizer's permission and one per schedule rule
    expect(resourcesOfType(s.json, 'AWS::Lambda::Permission')).toHaveLength(1 + BackgroundFunctions.filter((b) => b.kind === 'schedule').length);
    // every parameter is passed by the parent, and every other Ref names a resource of the nested stack or a pseudo parameter
    const declared = Object.keys(s.endpoints.raw.Parameters ?? {}).sort();
    expect(Object.keys(s.json.Resources[s.endpoints.resourceId]!.Properties!.Parameters ?? {}).sort()).toEqual(declared);
    for (const ref of refsIn(s.endpoints.json.Resources)) {
      const known = ref in s.json.Resources || ref in s.endpoints.raw.Resources || ref.startsWith('AWS::');
      expect({ ref, known }).toEqual({ ref, known: true });
    }
  });

  test('each HTTP function may be invoked by its own method on this stage only', () => {
    const permissions = resourcesOfType(s.endpoints.json, 'AWS::Lambda::Permission').map(([, p]) => p.Properties!);
    expect(permissions).toHaveLength(HttpEndpoints.length);
    const api = logicalIdOf(s.stack.partnerApi.api);
    for (const e of HttpEndpoints) {
      const fn = logicalIdOf(s.stack.functions[e.name]!.fn);
      const own = permissions.filter((p) => refsIn(p.FunctionName).includes(fn));
      expect({ name: e.name, count: own.length }).toEqual({ name: e.name, count: 1 });
      expect(own[0]).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
      const sourceArn = JSON.stringify(own[0]!.SourceArn);
      expect(refsIn(own[0]!.SourceArn)).toContain(api);
      // the stage by its literal name, the method, the path with {parameters} as *
      expect(sourceArn).toContain(`/prod/${e.method}${e.path.replace(/\{[^}]+\}/g, '*')}"`);
    }
  });

  test('the deployment waits for the endpoints stack and is replaced when the methods change', () => {
    const [[, deployment]] = resourcesOfType(s.json, 'AWS::ApiGateway::Deployment') as [[string, any]];
    expect(asArray(deployment.DependsOn)).toContain(s.endpoints.resourceId);
    // the logical id hashes every method (also the ones in the nested stack): new methods, new deployment
    expect(grownDeployment).toHaveLength(1);
    expect(grownDeployment).not.toEqual(deploymentId(s));
  });
});
