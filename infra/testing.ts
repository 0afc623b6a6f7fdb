/**
 * Helpers for the infra tests: an App with the cdk.json context (same feature flags as
 * `cdk synth`), and small readers over a synthesized template. Not used by the app itself.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, CfnElement, Stack, type NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readStageConfig } from './config';
import { InteropStack, type InteropStackProps } from './interop-stack';
import { REPO_ROOT } from './service-function';

export const TEST_ACCOUNT = '123456789012';
export const TEST_REGION = 'eu-west-1';

export function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
}

export interface Synthesized {
  app: App;
  stack: InteropStack;
  /** the stage's (parent) stack */
  template: Template;
  json: CfnTemplate;
  /** the nested stack of the alarms and the dashboard (infra/alarms.ts) */
  alarms: NestedTemplate;
  /** the nested stack of the API's per-endpoint resources, methods and invoke permissions (infra/partner-api.ts) */
  endpoints: NestedTemplate;
  outdir: string;
}

export interface NestedTemplate {
  stack: NestedStack;
  /** logical id of its AWS::CloudFormation::Stack resource in the parent */
  resourceId: string;
  /** the nested template as synthesized: parent values arrive as Parameters */
  raw: CfnTemplate;
  /**
   * The nested template with every `{Ref: <parameter>}` replaced by the value the parent passes
   * for it: a reference to a parent resource reads as it did when the alarms were in the parent
   * (`{Ref: FnX}`, `{Fn::GetAtt: [QueueX, QueueName]}`), so assertions keep naming parent resources.
   */
  json: CfnTemplate;
  template: Template;
}

export interface CfnResourceJson {
  Type: string;
  // CloudFormation properties are untyped JSON
  Properties?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string | string[];
  Metadata?: Record<string, unknown>;
}
export interface CfnTemplate {
  Resources: Record<string, CfnResourceJson>;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
  Parameters?: Record<string, { Type: string; Description?: string }>;
}

/**
 * Builds the stack once. `bundle: false` skips esbuild (CDK's `aws:cdk:bundling-stacks` context)
 * for tests that only look at the template shape.
 */
export function synthesize(
  options: { context?: Record<string, unknown>; bundle?: boolean; props?: Partial<Omit<InteropStackProps, 'config'>> } = {},
): Synthesized {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-cdk-'));
  const context: Record<string, unknown> = { ...cdkJsonContext(), ...options.context };
  if (options.bundle === false) context['aws:cdk:bundling-stacks'] = [];
  const app = new App({ context, outdir });
  const config = readStageConfig(app.node, {});
  const stack = new InteropStack(app, config.prefix, { config, env: { account: TEST_ACCOUNT, region: TEST_REGION }, ...options.props });
  const template = Template.fromStack(stack);
  const json = template.toJSON() as CfnTemplate;
  return {
    app,
    stack,
    template,
    json,
    alarms: nestedTemplate(stack, json, stack.alarms.stack),
    endpoints: nestedTemplate(stack, json, stack.partnerApi.endpointsStack),
    outdir,
  };
}

/** Reads a nested stack of `parent` and resolves its parameters to what the parent passes (see NestedTemplate.json). */
export function nestedTemplate(parent: InteropStack, parentJson: CfnTemplate, nested: NestedStack): NestedTemplate {
  const resourceId = Stack.of(nested.nestedStackResource!).getLogicalId(nested.nestedStackResource!);
  const passed: Record<string, unknown> = parentJson.Resources[resourceId]?.Properties?.Parameters ?? {};
  const raw = Template.fromStack(nested).toJSON() as CfnTemplate;
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve);
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    if (Object.keys(o).length === 1 && typeof o.Ref === 'string' && o.Ref in (raw.Parameters ?? {})) {
      if (!(o.Ref in passed)) throw new Error(`nested stack parameter ${o.Ref} is not passed by the parent`);
      return passed[o.Ref];
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, resolve(x)]));
  };
  const json = { ...raw, Resources: resolve(raw.Resources), Outputs: resolve(raw.Outputs) } as CfnTemplate;
  if (!json.Outputs) delete json.Outputs;
  return { stack: nested, resourceId, raw, json, template: Template.fromJSON(json as never) };
}

/** Logical id of a construct's CloudFormation resource in the stack (parent or nested) it belongs to. */
export function logicalIdOf(construct: { node: { defaultChild?: unknown } } | CfnElement): string {
  const element = (construct instanceof CfnElement ? construct : construct.node.defaultChild) as CfnElement;
  return Stack.of(element).getLogicalId(element);
}

/** Removes the temporary cloud assembly (bundles included) of a synthesis. */
export function removeAssembly(s: Synthesized | undefined): void {
  if (s) fs.rmSync(s.outdir, { recursive: true, force: true });
}

export function resourcesOfType(json: CfnTemplate, type: string): Array<[string, CfnResourceJson]> {
  return Object.entries(json.Resources).filter(([, r]) => r.Type === type);
}

/** Logical id of `{Ref: X}` or `{Fn::GetAtt: [X, ...]}`; undefined for anything else. */
export function refOf(value: unknown): string | undefined {
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return v.Ref;
    if (Array.isArray(v['Fn::GetAtt'])) return v['Fn::GetAtt'][0] as string;
  }
  return undefined;
}

/** Every logical id referenced anywhere inside a value. */
export function refsIn(value: unknown): string[] {
  const found: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    const r = refOf(v);
    if (r) found.push(r);
    Object.values(v as Record<string, unknown>).forEach(walk);
  };
  walk(value);
  return found;
}

export const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
