/**
 * CDK app entry (`cdk.json`: `npx tsx infra/app.ts`).
 *
 *   npx cdk synth -c stage=dev                       # offline, no credentials needed
 *   npx cdk deploy -c stage=prod -c account=123456789012 -c region=eu-west-1
 *
 * Context: stage (default dev for synthesis only: a template synthesized without -c stage carries a
 * CloudFormation rule that refuses its deployment, see infra/interop-stack.ts), account / region (default CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION,
 * region falling back to us-east-1), and the optional knobs read in infra/config.ts.
 * cdk-nag (AwsSolutions + HIPAA Security) runs as a validation plugin: any unacknowledged finding
 * fails the synthesis.
 */
import { App } from 'aws-cdk-lib';
import { buildStageApp } from './stage-app';

const app = new App();
const { config } = buildStageApp(app);
if (!config.stageExplicit) {
  // stderr, so that `cdk synth` output (the template on stdout) stays clean
  console.error(
    `interop: no -c stage= given: synthesized ${config.prefix} as a preview. It cannot be deployed (a CloudFormation rule refuses it); deploy with -c stage=<stage>.`,
  );
}
app.synth();
