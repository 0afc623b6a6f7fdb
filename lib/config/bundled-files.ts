/**
 * Files a function reads at run time, shipped beside its bundle.
 * Part of the service facts (lib/config/service.ts re-exports it). Side-effect free at module
 * level (no calls but those marked pure, no spreads), so esbuild leaves out of a Lambda bundle whatever it does not use.
 */

/**
 * A file a function reads at run time, copied beside its bundle when the stack is synthesized
 * (infra/service-function.ts) and read from the repository by the local stack and the tests
 * (lib/openapi/published-files.ts). `source` is relative to the repository root.
 */
export interface BundledFile {
  /** file name in the function's package (`$LAMBDA_TASK_ROOT/<name>`) */
  name: string;
  source: string;
}

/** The files of the published API reference (GET /openapi.json, GET /docs). */
export const BundledFiles = {
  openApiDocument: { name: 'openapi.json', source: 'docs/openapi.json' },
  redocBundle: { name: 'redoc.standalone.js', source: 'node_modules/redoc/bundles/redoc.standalone.js' },
} as const satisfies Record<string, BundledFile>;
