/**
 * What `infra/app.ts` builds, as a function, so that a test can synthesize exactly what
 * `npm run synth` does (infra/platform.test.ts): the stage's stack from the context and the
 * environment, with the cdk-nag packs registered as validation plugins.
 */
import type { App } from 'aws-cdk-lib';
import { readStageConfig } from './config';
import { InteropStack } from './interop-stack';
import { addNagPlugins } from './nag';

export function buildStageApp(app: App, env: NodeJS.ProcessEnv = process.env): InteropStack {
  const config = readStageConfig(app.node, env);
  const stack = new InteropStack(app, config.prefix, {
    config,
    env: { account: config.account, region: config.region },
    description: `Clinical interoperability service (${config.stage}): HL7 exports, lab result intake, form intake`,
    terminationProtection: config.retainData,
  });
  addNagPlugins(app);
  return stack;
}
