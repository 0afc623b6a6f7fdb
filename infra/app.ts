/**
 * CDK app entry (`cdk.json`: `npx tsx infra/app.ts`).
 *
 *   npx cdk synth -c stage=dev                       # offline, no credentials needed
 *   npx cdk deploy -c stage=prod -c account=123456789012 -c region=eu-west-1
 *
 * Context: stage (default dev), account / region (default CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION,
 * region falling back to us-east-1), and the optional knobs read in infra/config.ts.
 * cdk-nag (AwsSolutions + HIPAA Security) runs as a validation plugin: any unacknowledged finding
 * fails the synthesis.
 */
import { App } from 'aws-cdk-lib';
import { readStageConfig } from './config';
import { InteropStack } from './interop-stack';
import { addNagPlugins } from './nag';

const app = new App();
const config = readStageConfig(app.node);
new InteropStack(app, config.prefix, {
  config,
  env: { account: config.account, region: config.region },
  description: `Clinical interoperability service (${config.stage}): HL7 exports, lab result intake, form intake`,
  terminationProtection: config.retainData,
});
addNagPlugins(app);
app.synth();
