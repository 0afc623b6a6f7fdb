/**
 * The I/O floor of an endpoint: the AWS calls one steady-state request made (as traced by
 * aws-calls.ts), issued alone with raw SDK clients (built like lib/aws/clients.ts) against the
 * same local stack, in the same order, concurrent where the handler ran them concurrently.
 *
 * "Mandatory" = every distinct call of the request once (an identical repeat is dropped).
 * Writes that create items (condition attribute_not_exists) get a fresh partition key per
 * iteration, and every later call of the same iteration that addresses that item follows it, so
 * conditional writes succeed exactly as in the request; everything else is replayed as captured.
 */
import * as ddb from '@aws-sdk/client-dynamodb';
import * as kms from '@aws-sdk/client-kms';
import * as sqs from '@aws-sdk/client-sqs';
import * as s3 from '@aws-sdk/client-s3';
import { concurrencyGroups, type CallRecord, type Phase } from './aws-calls';
import type { ClientId } from './cold-start';

export interface FloorCall {
  service: ClientId;
  op: string;
  phase: Phase;
  group: number;
  input: Record<string, unknown>;
}

export function floorTemplate(calls: CallRecord[]): FloorCall[] {
  const groups = concurrencyGroups(calls);
  const seen = new Set<string>();
  const out: FloorCall[] = [];
  calls.forEach((c, i) => {
    if (c.phase === 'other') return;
    const sig = `${c.service}.${c.op} ${JSON.stringify(c.input, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v))}`;
    if (seen.has(sig)) return;
    seen.add(sig);
    out.push({ service: c.service, op: c.op, phase: c.phase, group: groups[i]!, input: c.input });
  });
  return out;
}

export function describeFloor(template: FloorCall[]): string {
  const byGroup = new Map<string, string[]>();
  for (const c of template) {
    const key = `${c.phase}#${c.group}`;
    byGroup.set(key, [
      ...(byGroup.get(key) ?? []),
      `${c.op}${
        c.input.TableName
          ? `(${String(c.input.TableName).replace(/^interop-[a-z]+-/, '')})`
          : c.op === 'BatchGetItem'
            ? `(${Object.keys((c.input.RequestItems as object) ?? {})
                .map((t) => t.replace(/^interop-[a-z]+-/, ''))
                .join(',')})`
            : ''
      }`,
    ]);
  }
  return [...byGroup.values()].map((g) => (g.length > 1 ? `[${g.join(' || ')}]` : g[0])).join(' -> ');
}

type Command = new (input: never) => unknown;
const COMMANDS: Record<ClientId, Record<string, unknown>> = { dynamodb: ddb, kms, sqs, s3 };

export interface FloorEndpoints {
  dynamodb: string;
  kms: string;
  sqs: string;
  s3: string;
}

interface Sender {
  send(command: unknown): Promise<unknown>;
  destroy(): void;
}

export interface FloorRun {
  authorizerMs: number;
  handlerMs: number;
  totalMs: number;
  errors: string[];
}

export class FloorReplayer {
  private readonly clients: Record<ClientId, Sender>;

  constructor(endpoints: FloorEndpoints) {
    const common = { maxAttempts: 3 } as const;
    this.clients = {
      dynamodb: new ddb.DynamoDBClient({ ...common, endpoint: endpoints.dynamodb }) as unknown as Sender,
      kms: new kms.KMSClient({ ...common, endpoint: endpoints.kms }) as unknown as Sender,
      sqs: new sqs.SQSClient({ ...common, endpoint: endpoints.sqs }) as unknown as Sender,
      s3: new s3.S3Client({ ...common, endpoint: endpoints.s3, forcePathStyle: true }) as unknown as Sender,
    };
  }

  close(): void {
    for (const c of Object.values(this.clients)) c.destroy();
  }

  /** The commands of one iteration, built before the clock starts. */
  private prepare(template: FloorCall[], suffix: string): Array<{ call: FloorCall; command: unknown }> {
    const created = new Set<string>(); // `${table}\u0000${pk}` of items this iteration re-keyed
    const rekey = (table: string, key: Record<string, { S?: string }> | undefined, create: boolean) => {
      const pk = key?.pk?.S;
      if (!key || pk === undefined) return;
      const id = `${table}\u0000${pk}`;
      if (create) created.add(id);
      if (created.has(id)) key.pk = { S: pk + suffix };
    };
    return template.map((call) => {
      const input = structuredClone(call.input);
      if (call.service === 'dynamodb') {
        const table = String(input.TableName ?? '');
        const creates = /attribute_not_exists/.test(String(input.ConditionExpression ?? ''));
        switch (call.op) {
          case 'PutItem':
            rekey(table, input.Item as Record<string, { S?: string }>, creates);
            break;
          case 'UpdateItem':
          case 'DeleteItem':
          case 'GetItem':
            rekey(table, input.Key as Record<string, { S?: string }>, creates && call.op === 'UpdateItem');
            break;
          case 'BatchGetItem':
            for (const [t, req] of Object.entries((input.RequestItems ?? {}) as Record<string, { Keys: Array<Record<string, { S?: string }>> }>)) {
              for (const k of req.Keys) rekey(t, k, false);
            }
            break;
          default:
            break;
        }
      }
      const Ctor = COMMANDS[call.service][`${call.op}Command`] as Command | undefined;
      if (!Ctor) throw new Error(`no command ${call.service}.${call.op}`);
      return { call, command: new Ctor(input as never) };
    });
  }

  async run(template: FloorCall[], iteration: number): Promise<FloorRun> {
    const prepared = this.prepare(template, `#floor${iteration}`);
    const errors: string[] = [];
    const send = async (p: { call: FloorCall; command: unknown }) => {
      try {
        await this.clients[p.call.service].send(p.command);
      } catch (error) {
        errors.push(`${p.call.op}: ${(error as Error).name}`);
      }
    };
    const phases: Record<Phase, number> = { authorizer: 0, handler: 0 };
    const start = process.hrtime.bigint();
    let i = 0;
    while (i < prepared.length) {
      const group = prepared[i]!.call.group;
      const phase = prepared[i]!.call.phase;
      const batch: typeof prepared = [];
      while (i < prepared.length && prepared[i]!.call.group === group && prepared[i]!.call.phase === phase) batch.push(prepared[i++]!);
      const t = process.hrtime.bigint();
      if (batch.length === 1) await send(batch[0]!);
      else await Promise.all(batch.map(send));
      phases[phase] += Number(process.hrtime.bigint() - t) / 1e6;
    }
    const totalMs = Number(process.hrtime.bigint() - start) / 1e6;
    return { authorizerMs: phases.authorizer, handlerMs: phases.handler, totalMs, errors };
  }
}
