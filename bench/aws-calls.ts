/**
 * Measurement 3 (and the I/O floors of measurement 2): every AWS SDK call the handlers make,
 * seen by a middleware added in this process to the shared clients of lib/aws/clients.ts
 * (`client.middlewareStack.add`, step initialize = once per logical call, before retries).
 *
 * Always on: a counter per service.operation (negligible cost).
 * Tracing (only in the call-count phase, never while timing): the phase (authorizer / handler,
 * from an AsyncLocalStorage the bench sets around each function), a copy of the command input
 * (for the floor replay), start/end time, SDK attempts, and DynamoDB consumed capacity
 * (ReturnConsumedCapacity TOTAL is added to the copy of the input sent in tracing mode; dynalite
 * computes it with DynamoDB's rules: reads per 4 KB, eventually consistent = half, writes per
 * 1 KB of the larger of old and new item).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Client } from '@aws-sdk/client-s3';
import { Tables } from '../lib/config/service';
import type { ClientId } from './cold-start';

export type Phase = 'authorizer' | 'handler';

export interface CallRecord {
  service: ClientId;
  op: string;
  phase: Phase | 'other';
  startNs: bigint;
  endNs?: bigint;
  input: Record<string, unknown>;
  table?: string;
  error?: string;
  attempts?: number;
  /** DynamoDB capacity units as reported (RRU for reads, WRU for writes, table only) */
  units?: number;
  /** estimated extra WRU for secondary index maintenance */
  indexWrites?: number;
  /** bytes of the written item (PutItem) or the request body (SQS/S3/KMS payloads), when known */
  bytes?: number;
}

const CAPACITY_OPS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);
export const DYNAMO_READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
export const DYNAMO_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

type AnyClient = DynamoDBClient | KMSClient | SQSClient | S3Client;
type Middleware = (
  next: (args: { input: unknown }) => Promise<{ output: unknown }>,
  context: { commandName?: string },
) => (args: { input: unknown }) => Promise<{ output: unknown }>;

/** DynamoDB item size: attribute names + values (strings UTF-8, numbers ~ digits/2 + 1, binaries bytes). */
export function itemBytes(item: Record<string, unknown> | undefined): number {
  if (!item) return 0;
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueBytes(value as Record<string, unknown>);
  return size;
}

function valueBytes(value: Record<string, unknown>): number {
  const [type, v] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return Buffer.byteLength(v as string);
    case 'N':
      return Math.ceil(String(v).replace(/^-/, '').length / 2) + 1;
    case 'B':
      return (v as Uint8Array).length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (v as string[]).reduce((s, x) => s + Buffer.byteLength(x), 0);
    case 'L':
      return 3 + (v as Record<string, unknown>[]).reduce((s, x) => s + 1 + valueBytes(x), 0);
    case 'M':
      return 3 + itemBytes(v as Record<string, unknown>) + Object.keys(v as object).length;
    default:
      return 0;
  }
}

const tableIndexKeys = (physical: string): string[][] => {
  // physical name is `${prefix}-${baseName}`
  const def = Object.values(Tables).find((t) => physical.endsWith(`-${t.baseName}`));
  if (!def) return [];
  return def.indexes.map((i) => (i.kind === 'global' ? [i.partitionKey!, i.sortKey] : [i.sortKey]));
};

/** Extra WRU for index maintenance: a put with an index's key attributes writes the index entry too (projection ALL). */
function estimateIndexWrites(op: string, input: Record<string, unknown>, tableUnits: number): number {
  const table = input.TableName as string | undefined;
  if (!table) return 0;
  const indexes = tableIndexKeys(table);
  if (indexes.length === 0) return 0;
  let extra = 0;
  if (op === 'PutItem') {
    const item = input.Item as Record<string, unknown>;
    for (const keys of indexes) if (keys.every((k) => k in item)) extra += tableUnits;
  } else if (op === 'UpdateItem') {
    const expression = String(input.UpdateExpression ?? '');
    const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const resolved = expression.replace(/#\w+/g, (n) => names[n] ?? n);
    const [setPart = '', removePart = ''] = [/SET (.*?)( REMOVE|$)/.exec(resolved)?.[1], /REMOVE (.*?)( SET|$)/.exec(resolved)?.[1]];
    for (const keys of indexes) {
      if (keys.some((k) => new RegExp(`\\b${k}\\s*=`).test(setPart)))
        extra += tableUnits; // index entry (re)written
      else if (keys.some((k) => new RegExp(`\\b${k}\\b`).test(removePart))) extra += 1; // index entry deleted
    }
  }
  return extra;
}

function unitsOf(output: Record<string, unknown>): number | undefined {
  const cc = output.ConsumedCapacity as { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> | undefined;
  if (!cc) return undefined;
  return Array.isArray(cc) ? cc.reduce((s, c) => s + (c.CapacityUnits ?? 0), 0) : cc.CapacityUnits;
}

export class CallRecorder {
  readonly counts = new Map<string, number>();
  readonly trace: CallRecord[] = [];
  tracing = false;
  private readonly phaseStore = new AsyncLocalStorage<Phase>();

  /** Runs `fn` attributed to `phase` (tracing mode only; outside it the store is not used). */
  inPhase<T>(phase: Phase, fn: () => Promise<T>): Promise<T> {
    return this.tracing ? this.phaseStore.run(phase, fn) : fn();
  }

  /** Stops AsyncLocalStorage's promise tracking once tracing is done, so timed runs do not pay for it. */
  endTracing(): void {
    this.tracing = false;
    this.phaseStore.disable();
  }

  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }

  /** calls per service.operation between two snapshots */
  static diff(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, v] of after) {
      const d = v - (before.get(k) ?? 0);
      if (d > 0) out[k] = d;
    }
    return out;
  }

  attach(clients: Record<ClientId, AnyClient>): void {
    for (const [service, client] of Object.entries(clients) as Array<[ClientId, AnyClient]>) {
      const middleware: Middleware = (next, context) => async (args) => {
        const op = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        const key = `${service}.${op}`;
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
        if (!this.tracing) return next(args);
        const input = structuredClone(args.input) as Record<string, unknown>;
        const record: CallRecord = { service, op, phase: this.phaseStore.getStore() ?? 'other', startNs: process.hrtime.bigint(), input };
        if (typeof input.TableName === 'string') record.table = input.TableName;
        if (op === 'BatchGetItem' || op === 'BatchWriteItem') record.table = Object.keys((input.RequestItems as object) ?? {}).join(',');
        if (op === 'PutItem') record.bytes = itemBytes(input.Item as Record<string, unknown>);
        if (service === 'sqs' && typeof input.MessageBody === 'string') record.bytes = Buffer.byteLength(input.MessageBody);
        this.trace.push(record);
        const sent = service === 'dynamodb' && CAPACITY_OPS.has(op) ? { ...args, input: { ...(args.input as object), ReturnConsumedCapacity: 'TOTAL' } } : args;
        try {
          const result = await next(sent);
          const output = result.output as Record<string, unknown> & { $metadata?: { attempts?: number } };
          record.attempts = output.$metadata?.attempts;
          if (service === 'dynamodb') {
            record.units = unitsOf(output);
            if (record.units !== undefined && DYNAMO_WRITES.has(op)) record.indexWrites = estimateIndexWrites(op, input, record.units);
          }
          return result;
        } catch (error) {
          record.error = (error as Error).name;
          // DynamoDB bills a write whose condition fails as a write of the item (at least 1 WRU)
          if (service === 'dynamodb' && DYNAMO_WRITES.has(op) && record.error === 'ConditionalCheckFailedException') {
            record.units = Math.max(1, Math.ceil((record.bytes ?? 0) / 1024));
          }
          record.attempts = (error as { $metadata?: { attempts?: number } }).$metadata?.attempts;
          throw error;
        } finally {
          record.endNs = process.hrtime.bigint();
        }
      };
      (client.middlewareStack as unknown as { add(m: Middleware, o: { step: string; name: string }): void }).add(middleware, {
        step: 'initialize',
        name: 'benchCallRecorder',
      });
    }
  }

  /** The calls recorded while running `fn` (tracing on). */
  async capture<T>(fn: () => Promise<T>): Promise<{ value: T; calls: CallRecord[] }> {
    const from = this.trace.length;
    const value = await fn();
    return { value, calls: this.trace.slice(from) };
  }
}

// ---------------------------------------------------------------- call summaries

export interface CallLine {
  phase: Phase | 'other';
  call: string;
  table?: string;
  units?: number;
  indexWrites?: number;
  bytes?: number;
  ms: number;
  error?: string;
  /** calls of the same group ran concurrently */
  group: number;
}

export interface PathCalls {
  endpoint: string;
  path: string;
  status: number;
  calls: CallLine[];
  byPhase: Record<'authorizer' | 'handler', { total: number; dynamodb: number; kms: number; sqs: number; s3: number; rru: number; wru: number }>;
  /** identical calls (service, operation, input) issued more than once in the request */
  repeated: string[];
}

export function shortTable(physical: string | undefined): string | undefined {
  if (!physical) return undefined;
  return physical
    .split(',')
    .map((t) => Object.values(Tables).find((d) => t.endsWith(`-${d.baseName}`))?.id ?? t)
    .join(',');
}

/** Groups calls that overlapped in time (issued concurrently) and numbers the groups in order. */
export function concurrencyGroups(calls: CallRecord[]): number[] {
  const groups: number[] = [];
  let group = 0;
  let groupEnd = -1n;
  calls.forEach((c, i) => {
    if (i > 0 && c.startNs >= groupEnd) group += 1;
    groupEnd = i === 0 || c.startNs >= groupEnd ? (c.endNs ?? c.startNs) : (c.endNs ?? c.startNs) > groupEnd ? (c.endNs ?? c.startNs) : groupEnd;
    groups.push(group);
  });
  return groups;
}

function stableInput(input: Record<string, unknown>): string {
  return JSON.stringify(input, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v));
}

export function summarizeCalls(endpoint: string, path: string, status: number, calls: CallRecord[]): PathCalls {
  const groups = concurrencyGroups(calls);
  const empty = () => ({ total: 0, dynamodb: 0, kms: 0, sqs: 0, s3: 0, rru: 0, wru: 0 });
  const byPhase = { authorizer: empty(), handler: empty() };
  const seen = new Map<string, number>();
  const repeated: string[] = [];
  for (const c of calls) {
    if (c.phase === 'other') continue;
    const p = byPhase[c.phase];
    p.total += 1;
    p[c.service] += 1;
    if (c.service === 'dynamodb') {
      if (DYNAMO_READS.has(c.op)) p.rru += c.units ?? 0;
      if (DYNAMO_WRITES.has(c.op)) p.wru += (c.units ?? 0) + (c.indexWrites ?? 0);
    }
    const sig = `${c.service}.${c.op} ${stableInput(c.input)}`;
    seen.set(sig, (seen.get(sig) ?? 0) + 1);
    if (seen.get(sig) === 2) repeated.push(`${c.phase}: ${c.service}.${c.op}${c.table ? ` (${shortTable(c.table)})` : ''}`);
  }
  return {
    endpoint,
    path,
    status,
    calls: calls.map((c, i) => ({
      phase: c.phase,
      call: `${c.service}.${c.op}`,
      table: shortTable(c.table),
      units: c.units,
      indexWrites: c.indexWrites || undefined,
      bytes: c.bytes,
      ms: c.endNs ? Math.round(Number(c.endNs - c.startNs) / 1e4) / 100 : 0,
      error: c.error,
      group: groups[i]!,
    })),
    byPhase,
    repeated,
  };
}
