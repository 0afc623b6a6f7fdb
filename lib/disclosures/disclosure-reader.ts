/**
 * Reading a patient's accounting of disclosures back (GET /disclosures, `npm run audit -- disclosures`):
 * one Query on the patient's disclosure partition, the time range a `BETWEEN` on the sort key, oldest
 * first, paged by a cursor (the sort key of the last record of a page, base64url). A cursor only moves
 * within the partition of the patient asked for: one made for another patient or range is refused, and
 * could not reach another patient's records anyway (the partition comes from `patientId`).
 */
import { QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { awsCall } from '../aws/dependency-calls';
import { InvalidParameterError } from '../domain-errors';
import { disclosurePartition, type DisclosureRecord } from './disclosure-log';

/** How far back the accounting goes when `from` is not given: the six years HIPAA asks an accounting to cover. */
export const DEFAULT_ACCOUNTING_YEARS = 6;
export const DEFAULT_DISCLOSURE_LIMIT = 50;
export const MAX_DISCLOSURE_LIMIT = 200;

export interface DisclosureRange {
  /** inclusive bounds, ISO 8601 UTC instants */
  from: string;
  to: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z$/;

/**
 * The range asked for: `from` and `to` each a date (`YYYY-MM-DD`: `from` its first instant, `to` its
 * last, so `from=to=2026-12-07` is that whole day) or a UTC instant (`...Z`), both inclusive. `to`
 * defaults to now, `from` to six years before `to`. A bad value, or `from` after `to`, names the parameter.
 */
export function disclosureRange(input: { from?: string; to?: string }, now: Date): DisclosureRange {
  const to = input.to === undefined ? now : boundary('to', input.to);
  const from = input.from === undefined ? yearsBefore(to, DEFAULT_ACCOUNTING_YEARS) : boundary('from', input.from);
  if (from.getTime() > to.getTime()) throw new InvalidParameterError('from', 'must not be after to', 'from must not be after to');
  return { from: from.toISOString(), to: to.toISOString() };
}

function boundary(name: 'from' | 'to', value: string): Date {
  const text = value.trim();
  let date: Date | undefined;
  if (DATE.test(text)) date = new Date(`${text}T${name === 'from' ? '00:00:00.000' : '23:59:59.999'}Z`);
  else if (INSTANT.test(text)) date = new Date(text);
  if (!date || Number.isNaN(date.getTime()) || (DATE.test(text) && date.toISOString().slice(0, 10) !== text)) {
    const message = 'must be a date (YYYY-MM-DD) or a UTC instant (YYYY-MM-DDThh:mm:ssZ)';
    throw new InvalidParameterError(name, message, `${name} ${message}`);
  }
  return date;
}

function yearsBefore(date: Date, years: number): Date {
  const out = new Date(date.getTime());
  out.setUTCFullYear(out.getUTCFullYear() - years);
  return out;
}

export interface DisclosurePage {
  items: DisclosureRecord[];
  /** present when there are more records in the range: pass it as `cursor` */
  nextCursor?: string;
}

export class DisclosureReader {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  /** One page of a patient's disclosures in the range, oldest first. */
  async page(patientId: string, range: DisclosureRange, options: { limit: number; cursor?: string }): Promise<DisclosurePage> {
    const pk = disclosurePartition(patientId);
    const after = options.cursor === undefined ? undefined : cursorSortKey(options.cursor, range);
    // one more than the page: whether a next page exists is known without a second call
    const out = await awsCall(DISCLOSURES_DEPENDENCY, () =>
      this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          // `~` sorts after `#` and every id character: the last instant's records are inside the range
          ExpressionAttributeValues: marshall({ ':pk': pk, ':from': range.from, ':to': `${range.to}~` }),
          Limit: options.limit + 1,
          ...(after ? { ExclusiveStartKey: marshall({ pk, sk: after }) } : {}),
        }),
      ),
    );
    const rows = (out.Items ?? []).map(row);
    const page = rows.slice(0, options.limit);
    return { items: page.map((r) => r.record), ...(rows.length > options.limit ? { nextCursor: encodeCursor(page[page.length - 1]!.sk) } : {}) };
  }

  /** Every disclosure of a patient in the range, oldest first (the CLI). */
  async all(patientId: string, range: DisclosureRange): Promise<DisclosureRecord[]> {
    const records: DisclosureRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.page(patientId, range, { limit: MAX_DISCLOSURE_LIMIT, cursor });
      records.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return records;
  }
}

const DISCLOSURES_DEPENDENCY = 'audit-table';

function encodeCursor(sk: string): string {
  return Buffer.from(sk, 'utf8').toString('base64url');
}

/** The sort key a cursor stands for, when it is one this reader issued for the range; else a 400 naming `cursor`. */
function cursorSortKey(cursor: string, range: DisclosureRange): string {
  const sk = /^[A-Za-z0-9_-]{1,700}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const instant = sk.slice(0, 24);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[\x21-\x7e]+$/.test(sk) || instant < range.from || instant > range.to) {
    throw new InvalidParameterError(
      'cursor',
      'is not a cursor returned by this list for this range',
      'cursor is not a cursor returned by this list for this range',
    );
  }
  return sk;
}

function row(item: Record<string, AttributeValue>): { sk: string; record: DisclosureRecord } {
  const { pk: _pk, sk, kind: _kind, ...record } = unmarshall(item);
  return { sk: String(sk), record: record as DisclosureRecord };
}
