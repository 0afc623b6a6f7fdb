/**
 * Least privilege derived from the code: every function is bundled as
 * infra/service-function.ts bundles it, and the AWS operations its bundle can send are compared
 * with what its `needs` (lib/config/service.ts) declare, which is exactly what the stack grants
 * (infra/interop-stack.test.ts checks the synthesized policies against the declaration).
 *
 * DynamoDB, per table: the bundle's command classes name the operations (bundle-operations.ts);
 * which table each operation goes to comes from the first-party modules in the bundle (esbuild's
 * metafile), each of which works on one table (TABLE_OF_MODULE). A declared operation the bundled
 * code of that table cannot send fails, as does a table whose code is not in the bundle.
 */
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints, Tables, type ResourceNeeds, type TableId } from '../lib/config/service';
import { bundledOperations, bundleFunction, sourceDynamoOperations, type FunctionBundle } from './bundle-operations';
import { DEFAULT_FUNCTIONS_DIR, entryPath } from './service-function';

/** Every first-party module that sends DynamoDB commands, and the table it works on. */
const TABLE_OF_MODULE: Record<string, TableId> = {
  'lib/chart/chart-store.ts': 'chart',
  'lib/chart/chart-reader.ts': 'chart',
  'lib/chart/chart-note-writer.ts': 'chart',
  'lib/intake/held-records.ts': 'chart',
  'lib/relationships/relationships.ts': 'chart',
  'lib/intake/document-numbers.ts': 'chart',
  'lib/intake/partner-identities.ts': 'chart',
  'lib/intake/mrn-index.ts': 'chart',
  'lib/intake/merge-reviews.ts': 'chart',
  'lib/forms/packet-store.ts': 'forms',
  'lib/forms/packet-reader.ts': 'forms',
  'lib/forms/packet-intake-writer.ts': 'forms',
  'lib/results/result-store.ts': 'results',
  'lib/results/result-summary-reader.ts': 'results',
  'lib/results/result-version-reader.ts': 'results',
  'lib/results/result-writer.ts': 'results',
  'lib/results/notification-ledger.ts': 'results',
  'lib/results/lookup-keys.ts': 'results',
  'lib/results/result-items.ts': 'results',
  'lib/results/idempotency.ts': 'idempotency',
  'lib/keys/api-key-store.ts': 'keys',
  'lib/keys/keys-table-scan.ts': 'keys',
  'lib/keys/authority-owner-reader.ts': 'keys',
  'lib/keys/rate-limiter.ts': 'rateLimit',
  'lib/audit/audit-trail.ts': 'audit',
  'lib/audit/audit-trail-reader.ts': 'audit',
  'lib/disclosures/disclosure-log.ts': 'audit',
  'lib/disclosures/disclosure-reader.ts': 'audit',
  'lib/disclosures/patient-read-volume.ts': 'rateLimit',
  'lib/webhooks/subscription-store.ts': 'webhooks',
};
/** helpers that send on behalf of their caller (the caller's `await queryPages(` counts as its Query) */
const HELPERS = new Set(['lib/aws/query-pages.ts']);
/** sent by the SDK itself only when endpoint discovery is turned on (it is not): never granted */
const SDK_INTERNAL = new Set(['DescribeEndpoints', 'CreateSession']);

const functions: Array<{ name: string; needs: ResourceNeeds }> = [
  { name: AuthorizerFunction.name, needs: AuthorizerFunction.needs },
  ...HttpEndpoints.map((e) => ({ name: e.name, needs: e.needs })),
  ...BackgroundFunctions.map((b) => ({ name: b.name, needs: b.needs })),
];

const bundles = new Map<string, FunctionBundle>();
beforeAll(async () => {
  // two at a time (2 shared cores)
  const queue = [...functions];
  await Promise.all(
    [0, 1].map(async () => {
      for (let f = queue.shift(); f; f = queue.shift()) bundles.set(f.name, await bundleFunction(entryPath(DEFAULT_FUNCTIONS_DIR, f.name)));
    }),
  );
}, 300_000);

/** Per table, the DynamoDB operations the bundled modules of that table send, and whether one queries an index. */
function tableCode(bundle: FunctionBundle, inBundle: string[]): { byTable: Map<TableId, Set<string>>; indexQueries: Set<TableId>; unmapped: string[] } {
  const byTable = new Map<TableId, Set<string>>();
  const indexQueries = new Set<TableId>();
  const unmapped: string[] = [];
  for (const source of bundle.sources) {
    const { operations, indexes } = sourceDynamoOperations(source);
    if (!operations.length || HELPERS.has(source)) continue;
    const table = TABLE_OF_MODULE[source];
    if (!table) {
      unmapped.push(source);
      continue;
    }
    // esbuild may keep a module's constants but shake out its store class: count only what the bundle has
    const kept = operations.filter((op) => inBundle.includes(op));
    if (!kept.length) continue;
    const set = byTable.get(table) ?? new Set<string>();
    kept.forEach((op) => set.add(op));
    byTable.set(table, set);
    if (indexes.length) indexQueries.add(table);
  }
  return { byTable, indexQueries, unmapped };
}

describe('least privilege derived from the bundles', () => {
  test('every function of the lists is checked', () => {
    expect(bundles.size).toBe(functions.length);
  });

  test.each(functions.map((f) => [f.name, f] as const))('%s: DynamoDB grants per table are operations its bundled code sends to that table', (name, f) => {
    const bundle = bundles.get(name)!;
    const inBundle = bundledOperations(bundle.code, 'dynamodb').filter((op) => !SDK_INTERNAL.has(op));
    const { byTable, indexQueries, unmapped } = tableCode(bundle, inBundle);
    // every module that talks to DynamoDB is attributed to a table
    expect({ fn: name, unmapped }).toEqual({ fn: name, unmapped: [] });
    // the two readings agree: every command class in the minified bundle is sent by a bundled module
    const fromSources = [...new Set([...byTable.values()].flatMap((s) => [...s]))].sort();
    expect({ fn: name, operations: fromSources }).toEqual({ fn: name, operations: inBundle });

    const declared = f.needs.tables ?? {};
    for (const [table, ops] of Object.entries(declared) as Array<[TableId, string[]]>) {
      const sent = byTable.get(table);
      // a table whose code is not in the bundle gets nothing (e.g. receiveTestData and the keys table)
      expect({ fn: name, table, codeInBundle: Boolean(sent) }).toEqual({ fn: name, table, codeInBundle: true });
      const notSent = ops.map((op) => op.split(':')[0]!).filter((op) => !sent?.has(op));
      expect({ fn: name, table, grantedButNotInBundle: notSent }).toEqual({ fn: name, table, grantedButNotInBundle: [] });
      for (const op of ops.filter((o) => o.includes(':'))) {
        const index = op.split(':')[1]!;
        expect(Tables[table].indexes.map((i) => i.name)).toContain(index);
        expect({ fn: name, table, index, queriedByBundledCode: indexQueries.has(table) }).toEqual({ fn: name, table, index, queriedByBundledCode: true });
      }
    }
  });

  test.each(functions.map((f) => [f.name, f] as const))('%s: KMS, SQS and S3 grants are operations its bundle contains', (name, f) => {
    const code = bundles.get(name)!.code;
    const kms = bundledOperations(code, 'kms');
    expect({ fn: name, kms: (f.needs.kms ?? []).filter((op) => !kms.includes(op)) }).toEqual({ fn: name, kms: [] });
    if (!f.needs.kms?.length) expect({ fn: name, kms }).toEqual({ fn: name, kms: [] });
    const sqs = bundledOperations(code, 'sqs');
    // SendMessageBatch is authorised by sqs:SendMessage; consuming is the event source mapping's (no code)
    if (Object.values(f.needs.queues ?? {}).includes('send'))
      expect({ fn: name, sends: sqs.some((op) => op === 'SendMessage' || op === 'SendMessageBatch') }).toEqual({ fn: name, sends: true });
    if (!f.needs.queues || !Object.keys(f.needs.queues).length) expect({ fn: name, sqs }).toEqual({ fn: name, sqs: [] });
    const s3 = bundledOperations(code, 's3').filter((op) => !SDK_INTERNAL.has(op));
    const bucket = f.needs.documentsBucket;
    const granted = [
      ...(bucket === 'read' || bucket === 'readwrite' ? ['GetObject'] : []),
      ...(bucket === 'write' || bucket === 'readwrite' ? ['PutObject'] : []),
    ];
    expect({ fn: name, s3: granted.filter((op) => !s3.includes(op)) }).toEqual({ fn: name, s3: [] });
    if (!bucket) expect({ fn: name, s3 }).toEqual({ fn: name, s3: [] });
  });

  test('no DeleteItem grant on any table but idempotency and results (the only code that deletes in a function: IdempotencyStore.release, and the lab results notification marker once sent)', () => {
    const deleting = functions.flatMap((f) =>
      (Object.entries(f.needs.tables ?? {}) as Array<[TableId, string[]]>).filter(([, ops]) => ops.includes('DeleteItem')).map(([t]) => `${f.name}:${t}`),
    );
    expect(deleting.every((d) => d.endsWith(':idempotency') || d.endsWith(':results'))).toBe(true);
  });
});
