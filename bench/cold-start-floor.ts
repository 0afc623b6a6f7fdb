/**
 * The cold-start floor of ONE function (issue 31 item 5): the AWS SDK doing what that function's
 * measured cold invocation does, and nothing else.
 *
 *   - the same clients (those of its `needs`, built as lib/aws/clients.ts builds them),
 *   - importing the Command classes the function sends: the `@aws-sdk/client-*` command modules of
 *     those clients in the function's own bundle (its esbuild metafile) that its `needs` let it send
 *     (commandsOfNeeds; `needs` list exactly the operations its code sends). A command module it
 *     bundles but never sends (a reader class bundled whole, say) is its excess, not its floor,
 *   - sending the same first burst: the SDK calls the function's cold invocation started before
 *     any of them had answered (recorded in process by bench/cold-start-record.ts with the
 *     CallRecorder of bench/aws-calls.ts, the recording the warm I/O floor of bench/floor.ts
 *     replays), same commands, same inputs, same count, all started together,
 *
 * measured exactly like the function (bench/cold-start-child.mjs: stopped at the first outgoing
 * request). It never does more than the function: its calls are a subset of the function's
 * (those issued before any answer), its command modules a subset of those the function bundles and sends.
 */
import { createHash } from 'node:crypto';
import type { ResourceNeeds } from '../lib/config/resource-needs';
import type { CallRecord } from './aws-calls';
import type { BundleClientId, ClientId } from './cold-start';

/** One SDK call of a function's first burst, as the floor sends it. */
export interface BurstCall {
  service: ClientId;
  /** operation name without "Command" (Query, PutObject) */
  op: string;
  input: Record<string, unknown>;
}

export const CLIENT_PACKAGE: Record<BundleClientId, { pkg: string; cls: string; env: string }> = {
  dynamodb: { pkg: '@aws-sdk/client-dynamodb', cls: 'DynamoDBClient', env: 'DYNAMODB' },
  kms: { pkg: '@aws-sdk/client-kms', cls: 'KMSClient', env: 'KMS' },
  sqs: { pkg: '@aws-sdk/client-sqs', cls: 'SQSClient', env: 'SQS' },
  s3: { pkg: '@aws-sdk/client-s3', cls: 'S3Client', env: 'S3' },
  apigateway: { pkg: '@aws-sdk/client-api-gateway', cls: 'APIGatewayClient', env: 'API_GATEWAY' },
};

/**
 * The first burst of a recorded invocation: every call started before the first answer (success or
 * error) of any call came back. Such calls cannot depend on an answer; a call started after one can.
 * In recorded order.
 */
export function firstBurst(calls: readonly CallRecord[]): BurstCall[] {
  const ends = calls.map((c) => c.endNs).filter((e): e is bigint => e !== undefined);
  const firstEnd = ends.reduce<bigint | undefined>((min, e) => (min === undefined || e < min ? e : min), undefined);
  return calls.filter((c) => firstEnd === undefined || c.startNs < firstEnd).map((c) => ({ service: c.service, op: c.op, input: c.input }));
}

const COMMAND_MODULE = /node_modules\/@aws-sdk\/client-([a-z0-9-]+)\/dist-[a-z]+\/commands\/(\w+Command)\.js$/;
const CLIENT_OF_PACKAGE: Record<string, BundleClientId> = {
  dynamodb: 'dynamodb',
  kms: 'kms',
  sqs: 'sqs',
  s3: 's3',
  'api-gateway': 'apigateway',
};

/** The SDK Command classes a bundle contains (metafile inputs with bytes in the output), sorted: `dynamodb:QueryCommand`. */
export function commandsInBundle(outputInputs: Record<string, { bytesInOutput: number }>): string[] {
  const out = new Set<string>();
  for (const [input, { bytesInOutput }] of Object.entries(outputInputs)) {
    const m = COMMAND_MODULE.exec(input);
    const client = m ? CLIENT_OF_PACKAGE[m[1]!] : undefined;
    if (m && client && bytesInOutput > 0) out.add(`${client}:${m[2]}`);
  }
  return [...out].sort();
}

/**
 * The SDK Command classes a function may send by its `needs` (which list exactly the operations its
 * code sends: infra/least-privilege.test.ts holds them to the bundle): `dynamodb:QueryCommand`, ...
 * A command module bundled but outside these is code the function carries and never sends: its
 * excess, not its floor.
 */
export function commandsOfNeeds(needs: ResourceNeeds): Set<string> {
  const out = new Set<string>();
  for (const ops of Object.values(needs.tables ?? {})) for (const op of ops ?? []) out.add(`dynamodb:${op.split(':')[0]}Command`);
  for (const op of needs.kms ?? []) out.add(`kms:${op}Command`);
  if (Object.values(needs.queues ?? {}).includes('send')) {
    out.add('sqs:SendMessageCommand');
    out.add('sqs:SendMessageBatchCommand');
  }
  if (needs.documentsBucket === 'read' || needs.documentsBucket === 'readwrite') out.add('s3:GetObjectCommand');
  if (needs.documentsBucket === 'write' || needs.documentsBucket === 'readwrite') out.add('s3:PutObjectCommand');
  if (needs.apiGatewayKeys === 'delete') {
    out.add('apigateway:GetApiKeysCommand');
    out.add('apigateway:DeleteApiKeyCommand');
  }
  return out;
}

export interface CallFloorSpec {
  /** the clients it builds (the function's `needs`, DynamoDB always) */
  clients: BundleClientId[];
  /** `client:XCommand` of the command modules in the function's bundle that its needs let it send ({@link commandsOfNeeds}) */
  commands: string[];
  /** the first burst, sent concurrently, in order */
  burst: BurstCall[];
}

/** "33×Query(forms)", "GetItem(chart) + PutObject": the burst in a line. */
export function describeBurst(burst: readonly BurstCall[]): string {
  const counts = new Map<string, number>();
  for (const c of burst) {
    const table = typeof c.input.TableName === 'string' ? `(${c.input.TableName.replace(/^interop-[a-z]+-/, '')})` : '';
    const key = `${c.op}${table}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => (n > 1 ? `${n}×${k}` : k)).join(' + ') || 'no call';
}

/** A short stable id; functions with identical specs share one floor bundle. */
export function callFloorId(spec: CallFloorSpec): string {
  const hash = createHash('sha256').update(JSON.stringify(spec, bytesReplacer)).digest('hex').slice(0, 8);
  return `${spec.clients.join('+')} ${describeBurst(spec.burst)} #${hash}`;
}

function bytesReplacer(_key: string, value: unknown): unknown {
  return value instanceof Uint8Array ? { $bytes: Buffer.from(value).toString('base64') } : value;
}

/** A JS expression for a recorded input: JSON, with byte values (DynamoDB B, S3 bodies) as Uint8Array. */
export function inputLiteral(input: Record<string, unknown>): string {
  const marks: string[] = [];
  const json = JSON.stringify(input, (key, value: unknown) => {
    if (value instanceof Uint8Array) {
      marks.push(Buffer.from(value).toString('base64'));
      return `\u0000BYTES${marks.length - 1}\u0000`;
    }
    return value;
  });
  return json.replace(/"\\u0000BYTES(\d+)\\u0000"/g, (_m, i: string) => `new Uint8Array(Buffer.from(${JSON.stringify(marks[Number(i)])}, 'base64'))`);
}

/**
 * The floor's entry source: imports the clients and the function's Command classes (kept in the
 * bundle through an export, as the function keeps them by using them), builds the clients and
 * sends the burst concurrently (Promise.all), in recorded order.
 */
export function callFloorSource(spec: CallFloorSpec): string {
  const used = new Set(spec.burst.map((c) => `${c.service}:${c.op}Command`));
  const unbundled = [...used].filter((c) => !spec.commands.includes(c));
  if (unbundled.length) throw new Error(`burst sends commands the function does not bundle: ${unbundled.join(', ')}`);
  const missingClient = spec.burst.find((c) => !spec.clients.includes(c.service));
  if (missingClient) throw new Error(`burst calls ${missingClient.service}, a client outside the floor's clients`);
  const byClient = new Map<BundleClientId, string[]>();
  for (const c of spec.clients) byClient.set(c, []);
  for (const entry of spec.commands) {
    const [client, cls] = entry.split(':') as [BundleClientId, string];
    (byClient.get(client) ?? byClient.set(client, []).get(client)!).push(cls);
  }
  // a command module of a client outside `needs` (the function bundles it anyway) is imported, not built
  const imports = [...byClient].map(
    ([client, classes]) =>
      `import { ${[...(spec.clients.includes(client) ? [CLIENT_PACKAGE[client].cls] : []), ...classes.map((cls) => `${cls} as ${client}_${cls}`)].join(', ')} } from '${CLIENT_PACKAGE[client].pkg}';`,
  );
  const builds = spec.clients.map((c) => {
    const extra = c === 's3' ? `, forcePathStyle: Boolean(endpoint('S3'))` : '';
    return `    ${c}: new ${CLIENT_PACKAGE[c].cls}({ ...common, endpoint: endpoint('${CLIENT_PACKAGE[c].env}')${extra} }),`;
  });
  const sends = spec.burst.map((c) => `    built.${c.service}.send(new ${c.service}_${c.op}Command(${inputLiteral(c.input)})),`);
  return [
    ...imports,
    `const endpoint = (service: string) => process.env['AWS_ENDPOINT_URL_' + service] || undefined;`,
    `const common = { maxAttempts: 3 } as const;`,
    `/** the function's Command classes, kept in the bundle as the function keeps them */`,
    `export const commandClasses = [${spec.commands.map((entry) => entry.replace(':', '_')).join(', ')}];`,
    `type Sender = { send(command: unknown): Promise<unknown> };`,
    `let clients: Record<string, Sender> | undefined;`,
    `export const handler = async () => {`,
    `  const built = (clients ??= {`,
    ...builds,
    `  } as unknown as Record<string, Sender>);`,
    `  await Promise.all([`,
    ...sends,
    `  ]);`,
    `  return { statusCode: 200 };`,
    `};`,
  ].join('\n');
}

// ---------------------------------------------------------------- the recording child's output

/** Recorded calls as one JSON line (bigint times as strings, bytes as {$bytes: base64}). */
export function encodeCalls(calls: readonly CallRecord[]): string {
  return JSON.stringify(
    calls.map((c) => ({ service: c.service, op: c.op, input: c.input, startNs: String(c.startNs), endNs: c.endNs === undefined ? null : String(c.endNs) })),
    (_k, v: unknown) => (v instanceof Uint8Array ? { $bytes: Buffer.from(v).toString('base64') } : v),
  );
}

/** The inverse of encodeCalls (phase: handler). */
export function decodeCalls(text: string): CallRecord[] {
  const raw = JSON.parse(text, (_k, v: unknown) =>
    v && typeof v === 'object' && '$bytes' in v && Object.keys(v).length === 1
      ? new Uint8Array(Buffer.from(String((v as { $bytes: string }).$bytes), 'base64'))
      : v,
  ) as Array<{ service: CallRecord['service']; op: string; input: Record<string, unknown>; startNs: string; endNs: string | null }>;
  return raw.map((c) => ({
    service: c.service,
    op: c.op,
    phase: 'handler',
    input: c.input,
    startNs: BigInt(c.startNs),
    ...(c.endNs === null ? {} : { endNs: BigInt(c.endNs) }),
  }));
}
