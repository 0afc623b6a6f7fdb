/**
 * The CDK app bundles with the esbuild settings of lib/config/lambda-bundle.ts, which npm run build
 * and the bench use too: the target is the runtime's Node.js version.
 */
import { LAMBDA_ESBUILD_TARGET } from '../lib/config/lambda-bundle';
import { LAMBDA_BUNDLE_OPTIONS } from '../scripts/build';
import { RUNTIME } from './service-function';

test('the esbuild target is the Lambda runtime, for the CDK app and npm run build alike', () => {
  expect(LAMBDA_ESBUILD_TARGET).toBe(`node${RUNTIME.name.replace(/^nodejs|\.x$/g, '')}`);
  expect(LAMBDA_BUNDLE_OPTIONS.target).toBe(LAMBDA_ESBUILD_TARGET);
});
