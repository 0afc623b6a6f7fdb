/**
 * One Lambda function bundled in memory with the deployed esbuild settings, for the tests that check
 * what a bundle carries: not minified by default, so code can be searched by name; minified (as
 * deployed) for the tests that weigh it.
 */
import path from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_BUNDLE_OPTIONS } from '../../scripts/build';

const root = path.resolve(__dirname, '..', '..');

export interface FunctionBundle {
  /** each input with bytes in the output, and those bytes */
  inputs: Array<[input: string, bytesInOutput: number]>;
  /** the inputs alone */
  files: string[];
  /** the bundle's code */
  code: string;
}

export async function bundleFunction(name: string, options: { minify?: boolean } = {}): Promise<FunctionBundle> {
  const result = await build({
    ...LAMBDA_BUNDLE_OPTIONS,
    minify: options.minify ?? false,
    sourcemap: false,
    write: false,
    metafile: true,
    logLevel: 'silent',
    entryPoints: [path.join(root, 'functions', `${name}.ts`)],
    outfile: path.join(root, 'dist', name, 'index.mjs'),
  });
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint);
  const inputs = Object.entries(output?.inputs ?? {})
    .filter(([, use]) => use.bytesInOutput > 0)
    .map(([input, use]): [string, number] => [input, use.bytesInOutput]);
  return { inputs, files: inputs.map(([input]) => input), code: result.outputFiles.find((f) => f.path.endsWith('.mjs'))!.text };
}
