/**
 * cdk-nag v3 wiring. Rule packs run as CDK policy-validation plugins (a violation fails
 * `cdk synth`); acknowledgements are CDK's native `Validations.of(x).acknowledge()`.
 *
 * House rule: an acknowledgement is attached to exactly ONE CloudFormation resource, names one
 * finding (for IAM5: one `[Resource::...]` / `[Action::...]` finding) and says why. `acknowledge`
 * below enforces the first part: it refuses a Stack, App or any construct that is not, or does
 * not wrap, a single CfnResource.
 */
import { App, CfnResource, Stack, Stage, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, HIPAASecurityChecks, type NagPack } from 'cdk-nag';
import type { IConstruct } from 'constructs';

export function nagPacks(): NagPack[] {
  return [new AwsSolutionsChecks(), new HIPAASecurityChecks()];
}

/** Registers the packs on the app: `cdk synth` then fails on any unacknowledged finding. */
export function addNagPlugins(app: App): void {
  Validations.of(app).addPlugins(...nagPacks());
}

/** The one CfnResource a construct stands for (itself, or an L2's default child). */
export function singleResource(scope: IConstruct): CfnResource {
  if (scope instanceof Stack || scope instanceof Stage) throw new Error(`refusing a stack/app-wide acknowledgement at ${scope.node.path}`);
  if (CfnResource.isCfnResource(scope)) return scope;
  const child = scope.node.defaultChild;
  if (child && CfnResource.isCfnResource(child)) return child;
  throw new Error(`acknowledgements must target a single CloudFormation resource; ${scope.node.path} is not one`);
}

export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  if (reason.trim().length < 40) throw new Error(`acknowledgement ${id} at ${scope.node.path} needs a real reason`);
  Validations.of(singleResource(scope)).acknowledge({ id, reason });
}
