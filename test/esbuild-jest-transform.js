// Jest transformer: TypeScript (and ESM-only dependencies) -> CommonJS with esbuild.
// Type checking is `npm run typecheck` (part of `npm test`).
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { transformSync, version } = require('esbuild');

const self = readFileSync(__filename, 'utf8');

module.exports = {
  getCacheKey(source, filename) {
    return createHash('sha256').update(self).update(version).update(filename).update(source).digest('hex');
  },
  process(source, filename) {
    const result = transformSync(source, {
      loader: filename.endsWith('.ts') ? 'ts' : 'js',
      format: 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      sourcefile: filename,
      // jest's module system cannot run import(): turn it into require() of the transformed module
      supported: { 'dynamic-import': false },
    });
    return { code: result.code };
  },
};
