/**
 * Issue 31 item 5 ("no client a function never calls"): an HTTP function whose `needs` grant no
 * table is built on storelessHttpEndpoint or storelessFhirEndpoint (no audit step, so no DynamoDB client in its bundle), and
 * every function that may touch a table keeps httpEndpoint (its PHI access is audited). The bundle
 * half: an esbuild bundle of each storeless function contains no AWS SDK client.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { HttpEndpoints } from '../lib/config/service';
import { bundleFunction } from './support/function-bundle';

const root = path.resolve(__dirname, '..');
const grantsTable = (name: string) => Object.values(HttpEndpoints.find((e) => e.name === name)!.needs.tables ?? {}).some((ops) => (ops?.length ?? 0) > 0);
const source = (name: string) => readFileSync(path.join(root, 'functions', `${name}.ts`), 'utf8');
/** storelessHttpEndpoint, or storelessFhirEndpoint (the same with OperationOutcome errors) */
const STORELESS_BUILDER = /\bstoreless(Http|Fhir)Endpoint\(/;
const storeless = HttpEndpoints.filter((e) => !grantsTable(e.name)).map((e) => e.name);

describe('storeless HTTP functions', () => {
  it('are exactly the ones without a table in their needs', () => {
    expect(storeless).toEqual(expect.arrayContaining(['serveOpenApiDocument', 'serveApiReference', 'serveInboxPage', 'fhirMetadata', 'fhirRouteNotFound']));
    for (const endpoint of HttpEndpoints) {
      const text = source(endpoint.name);
      if (grantsTable(endpoint.name)) {
        expect({ name: endpoint.name, storeless: STORELESS_BUILDER.test(text) }).toEqual({ name: endpoint.name, storeless: false });
      } else {
        expect({ name: endpoint.name, storeless: STORELESS_BUILDER.test(text) }).toEqual({ name: endpoint.name, storeless: true });
      }
    }
  });

  it.each(storeless)('%s bundles no AWS SDK client', async (name) => {
    const { files } = await bundleFunction(name);
    expect(files.filter((file) => /node_modules\/@aws-sdk\/client-/.test(file))).toEqual([]);
  });
});
