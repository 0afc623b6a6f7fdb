/**
 * DynamoDB capacity units per request, as DynamoDB bills them, for the cost model (bench/cost.ts):
 * a middleware on the shared DynamoDB client (lib/aws/clients.ts) that, while metering is on,
 *   - reads: asks for ReturnConsumedCapacity TOTAL on a copy of the input and takes the units the
 *     emulator reports (dynalite applies DynamoDB's rules: per 4 KB read, eventually consistent = half);
 *   - writes (PutItem, UpdateItem, DeleteItem, BatchWriteItem): reads each written item before and
 *     after the write with a consistent GetItem through a client of its own (so nothing the service
 *     sends is changed or counted twice) and prices it as DynamoDB does:
 *       table: ceil(KB) of the larger of the item before and after (a new item: its own size);
 *       each index (projection ALL, so an index entry is the whole item): putting the item into the
 *       index costs ceil(KB) of the new item, taking it out ceil(KB) of the old one, moving its index
 *       key both, and any change to an item that stays in the index the larger of the two;
 *       a write whose condition fails: ceil(KB) of the item as it is (at least 1), table only.
 * Not a call count: a 3 KB PutItem is 3 write units, and its global index entry 3 more.
 * Metering adds reads of its own and is only switched on for a few requests outside the timed runs.
 */
import { DynamoDBClient, GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { Tables, type TableDefinition, type TableId } from '../lib/config/service';

type Item = Record<string, AttributeValue>;
// dynalite's item size (DynamoDB's rules: attribute names + values) and unit rounding
const { capacityUnits } = require('dynalite/db') as { capacityUnits: (item: Item | undefined, isRead: boolean) => number }; // eslint-disable-line @typescript-eslint/no-require-imports

const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand']);
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand']);

export interface CapacityUnits {
  rru: number;
  /** table write units */
  wruTable: number;
  /** index write units (global and local indexes) */
  wruIndex: number;
  /** wruTable + wruIndex */
  wru: number;
}

const zero = (): CapacityUnits => ({ rru: 0, wruTable: 0, wruIndex: 0, wru: 0 });

/** Write units of one item write: the table and each index of the table. */
export function itemWriteUnits(
  def: TableDefinition,
  before: Item | undefined,
  after: Item | undefined,
  conditionFailed: boolean,
): { table: number; index: number } {
  const size = (item: Item | undefined) => (item ? capacityUnits(item, false) : 0);
  if (conditionFailed) return { table: Math.max(1, size(before)), index: 0 };
  if (before === undefined && after === undefined) return { table: 1, index: 0 }; // deleting nothing still costs 1
  const table = Math.max(size(before), size(after));
  let index = 0;
  for (const ix of def.indexes) {
    const keyAttrs = ix.kind === 'global' ? [ix.partitionKey!, ix.sortKey] : [ix.sortKey];
    const keyIn = (item: Item | undefined) => (item && keyAttrs.every((a) => item[a] !== undefined) ? JSON.stringify(keyAttrs.map((a) => item[a])) : undefined);
    const k0 = keyIn(before);
    const k1 = keyIn(after);
    if (k0 !== undefined && k1 !== undefined && k0 === k1) {
      if (JSON.stringify(before) !== JSON.stringify(after)) index += Math.max(size(before), size(after));
    } else {
      if (k0 !== undefined) index += size(before);
      if (k1 !== undefined) index += size(after);
    }
  }
  return { table, index };
}

export class CapacityMeter {
  private metering = false;
  private units = zero();
  private readonly reader: DynamoDBClient;
  private readonly tableOf: Map<string, TableId>;

  constructor(endpoint: string, physicalTables: Record<TableId, string>) {
    this.reader = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    this.tableOf = new Map(Object.entries(physicalTables).map(([id, name]) => [name, id as TableId]));
  }

  /** Adds the middleware to a DynamoDB client (the shared one the handlers use). */
  attach(db: DynamoDBClient): void {
    db.middlewareStack.add(
      (next, context) => async (args) => {
        const command = String(context.commandName);
        if (!this.metering) return next(args);
        if (READS.has(command)) {
          const result = await next({ ...args, input: { ...(args.input as object), ReturnConsumedCapacity: 'TOTAL' } });
          const cc = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> }).ConsumedCapacity;
          this.units.rru += Array.isArray(cc) ? cc.reduce((s, c) => s + (c.CapacityUnits ?? 0), 0) : (cc?.CapacityUnits ?? 0);
          return result;
        }
        if (!WRITES.has(command)) return next(args);
        const writes = this.writesOf(command, args.input as WriteInput);
        const before = await Promise.all(writes.map((w) => this.read(w.tableName, w.key)));
        let failed = false;
        try {
          return await next(args);
        } catch (error) {
          failed = (error as Error).name === 'ConditionalCheckFailedException';
          throw error;
        } finally {
          const after = failed ? before : await Promise.all(writes.map((w) => this.read(w.tableName, w.key)));
          writes.forEach((w, i) => {
            const u = itemWriteUnits(Tables[w.table], before[i], after[i], failed);
            this.units.wruTable += u.table;
            this.units.wruIndex += u.index;
            this.units.wru += u.table + u.index;
          });
        }
      },
      { step: 'initialize', name: 'benchCapacityMeter' },
    );
  }

  /** Units consumed by `fn` (metering on while it runs; runs must not overlap). */
  async measure<T>(fn: () => Promise<T>): Promise<{ value: T; units: CapacityUnits }> {
    this.units = zero();
    this.metering = true;
    try {
      const value = await fn();
      return { value, units: { ...this.units } };
    } finally {
      this.metering = false;
    }
  }

  close(): void {
    this.reader.destroy();
  }

  private async read(tableName: string, key: Item): Promise<Item | undefined> {
    return (await this.reader.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
  }

  private writesOf(command: string, input: WriteInput): Array<{ tableName: string; table: TableId; key: Item }> {
    const keyOf = (table: TableId, item: Item): Item => {
      const def = Tables[table];
      return { [def.partitionKey]: item[def.partitionKey]!, ...(def.sortKey ? { [def.sortKey]: item[def.sortKey]! } : {}) };
    };
    const out: Array<{ tableName: string; table: TableId; key: Item }> = [];
    if (command === 'BatchWriteItemCommand') {
      for (const [tableName, list] of Object.entries(input.RequestItems ?? {})) {
        const table = this.tableOf.get(tableName);
        if (!table) continue;
        for (const r of list) out.push({ tableName, table, key: r.PutRequest ? keyOf(table, r.PutRequest.Item) : r.DeleteRequest!.Key });
      }
      return out;
    }
    const table = this.tableOf.get(input.TableName ?? '');
    if (table) out.push({ tableName: input.TableName!, table, key: input.Key ?? keyOf(table, input.Item!) });
    return out;
  }
}

interface WriteInput {
  TableName?: string;
  Key?: Item;
  Item?: Item;
  RequestItems?: Record<string, Array<{ PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }>>;
}
