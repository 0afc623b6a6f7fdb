/**
 * How every Lambda function is bundled (esbuild), in one place: the CDK app
 * (infra/service-function.ts, NodejsFunction `bundling`), `npm run build` (scripts/build.ts
 * LAMBDA_BUNDLE_OPTIONS) and the bench's cold-start measurement build with these, so what is
 * measured is what deploys.
 *
 * - one minified ESM file, the AWS SDK inside; `module` before `main`, so packages that ship an
 *   ES module build (the SDK's dist-es) are bundled from it and tree-shaken;
 * - the source map is a separate file beside the bundle (`index.mjs.map`, linked by a
 *   `sourceMappingURL` comment; without the sources' text): NODE_OPTIONS=--enable-source-maps maps
 *   stack traces, the bundle does not carry the map;
 * - no legal comments (none of the bundled packages has any today; this keeps it so).
 */

/**
 * ESM output cannot `require()`; CommonJS dependencies bundled into it call esbuild's `__require`,
 * which looks for a `require` in scope. This banner provides one (aliased import, so it cannot
 * clash with a symbol in the bundle).
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __interopCreateRequire } from 'node:module'; const require = __interopCreateRequire(import.meta.url);";

/** esbuild's target for the Lambda runtime (infra/service-function.ts RUNTIME, Node.js 24). */
export const LAMBDA_ESBUILD_TARGET = 'node24';

export const LAMBDA_MAIN_FIELDS = ['module', 'main'];
