/**
 * The service facts reach a Lambda bundle only as far as the function uses them (issue 31 item 5):
 * lib/config/* are side-effect free (package.json `sideEffects: false`), service.ts only
 * re-exports, an HTTP function carries its own route and not the endpoint list. Bundled with the
 * deployed esbuild options (scripts/build.ts LAMBDA_BUNDLE_OPTIONS), in memory.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_BUNDLE_OPTIONS } from '../../scripts/build';
import { HttpEndpoints, HttpRoutes } from './service';

const root = path.resolve(__dirname, '..', '..');

/** Bytes each lib/config file contributes to the bundle of `entry` (a file, or source text). */
async function configBytes(entry: { file: string } | { source: string }): Promise<Record<string, number>> {
  const result = await build({
    ...LAMBDA_BUNDLE_OPTIONS,
    absWorkingDir: root,
    write: false,
    metafile: true,
    outdir: path.join(root, 'dist', 'bundle-contents-test'),
    ...('file' in entry
      ? { entryPoints: [entry.file] }
      : { stdin: { contents: entry.source, resolveDir: root, sourcefile: 'entry.ts', loader: 'ts' as const } }),
  });
  const output = Object.entries(result.metafile.outputs).find(([file]) => !file.endsWith('.map'))![1];
  return Object.fromEntries(
    Object.entries(output.inputs)
      .filter(([file, { bytesInOutput }]) => file.startsWith('lib/config/') && bytesInOutput > 0)
      .map(([file, { bytesInOutput }]) => [file, bytesInOutput]),
  );
}

describe('service facts in a bundle', () => {
  it('reading Env.chartTable through service.ts brings nothing of lib/config: the name is inlined', async () => {
    const bytes = await configBytes({ source: "import { Env } from './lib/config/service';\nexport const name = process.env[Env.chartTable];\n" });
    expect(bytes).toEqual({});
  });

  it('reading Tables through service.ts brings tables.ts (with the forms state index attributes it names) and nothing else of lib/config', async () => {
    const bytes = await configBytes({ source: "import { Tables } from './lib/config/service';\nexport const name = process.env[Tables.chart.env];\n" });
    expect(Object.keys(bytes).sort()).toEqual(['lib/config/forms-state-summary.ts', 'lib/config/tables.ts']);
  });

  it('an HTTP function carries its own route, not the route table or the endpoint list', async () => {
    const bytes = await configBytes({ file: 'functions/exportHl7Note.ts' });
    expect(bytes['lib/config/endpoint-list.ts']).toBeUndefined();
    expect(bytes['lib/config/routes.ts']).toBeGreaterThan(0);
    // one route and the scope names (the whole table is ~3.5 KB minified)
    expect(bytes['lib/config/routes.ts']).toBeLessThan(400);
  });

  it('a background function carries no route and no endpoint list', async () => {
    const bytes = await configBytes({ file: 'functions/retryResultNotifications.ts' });
    expect(bytes['lib/config/routes.ts']).toBeUndefined();
    expect(bytes['lib/config/endpoint-list.ts']).toBeUndefined();
  });

  it('the authorizer carries the route table (it matches every request) but not the endpoint list', async () => {
    const bytes = await configBytes({ file: 'functions/authorizer.ts' });
    expect(bytes['lib/config/routes.ts']).toBeGreaterThan(2000);
    expect(bytes['lib/config/endpoint-list.ts']).toBeUndefined();
  });
});

describe('bundle files', () => {
  it('the source map is a file beside the bundle, linked by a comment, without the sources; the bundle carries no map', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lambda-bundle-'));
    try {
      const outfile = path.join(dir, 'index.mjs');
      await build({ ...LAMBDA_BUNDLE_OPTIONS, absWorkingDir: root, entryPoints: ['functions/fhirRouteNotFound.ts'], outfile });
      const code = readFileSync(outfile, 'utf8');
      expect(code.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(true);
      expect(code).not.toContain('sourceMappingURL=data:');
      expect(existsSync(`${outfile}.map`)).toBe(true);
      const map = JSON.parse(readFileSync(`${outfile}.map`, 'utf8')) as { sources: string[]; sourcesContent?: unknown };
      expect(map.sources.some((s) => s.endsWith('functions/fhirRouteNotFound.ts'))).toBe(true);
      expect(map.sourcesContent).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('routes and the endpoint list', () => {
  it('every HTTP function passes its own route (functions/<name>.ts: httpEndpoint, fhirEndpoint or their storeless forms (<name>Route, ...))', () => {
    const passed = readdirSync(path.join(root, 'functions'))
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => {
        const match = /\b(?:httpEndpoint|fhirEndpoint|storelessHttpEndpoint|storelessFhirEndpoint)\((\w+)Route\b/.exec(
          readFileSync(path.join(root, 'functions', f), 'utf8'),
        );
        return match ? [[f.replace(/\.ts$/, ''), match[1]]] : [];
      });
    expect(passed.length).toBe(HttpRoutes.length);
    for (const [file, route] of passed) expect(route).toBe(file);
  });

  it('HttpEndpoints is every route, in order, with its deployment facts', () => {
    expect(HttpEndpoints.map((e) => [e.kind, e.name, e.method, e.path, e.scope])).toEqual(HttpRoutes.map((r) => ['http', r.name, r.method, r.path, r.scope]));
    for (const e of HttpEndpoints) {
      expect(e.memoryMb).toBeGreaterThanOrEqual(128);
      expect(e.timeoutSeconds).toBeGreaterThan(0);
      expect(e.needs).toBeDefined();
    }
  });
});
