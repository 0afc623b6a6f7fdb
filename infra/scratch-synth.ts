import * as fs from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { readStageConfig } from './config';
import { InteropStack } from './interop-stack';
import { nagPacks } from './nag';
import { DEFAULT_FUNCTIONS_DIR } from './service-function';

const t0 = Date.now();
const app = new App({ context: JSON.parse(fs.readFileSync('cdk.json', 'utf8')).context, outdir: '/tmp/scratch/out' });
const config = readStageConfig(app.node);
const stack = new InteropStack(app, config.prefix, {
  config,
  env: { region: config.region },
  entryFor: (n) => { const p = path.join(DEFAULT_FUNCTIONS_DIR, `${n}.ts`); return fs.existsSync(p) ? p : path.join(__dirname, 'test-fixtures/stub-handler.ts'); },
});
app.synth();
console.log('synth ms', Date.now() - t0);
for (const pack of nagPacks()) {
  const r = pack.validateScope(app);
  for (const v of r.violations) console.log(v.ruleName, '|', v.violatingResources.map((x) => x.constructPath).join(', '));
}
console.log('total ms', Date.now() - t0, stack.stackName);
