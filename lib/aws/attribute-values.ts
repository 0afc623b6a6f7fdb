/**
 * DynamoDB attribute values <-> JavaScript values, for exactly the values our stores keep: a
 * small stand-in for @aws-sdk/util-dynamodb's marshall/unmarshall (issue 31 item 5: that package
 * added 4.9 KB to every Lambda bundle). Same results as the SDK's functions for these values
 * (test: lib/aws/attribute-values.test.ts compares both over the items the stores write):
 *
 *   string -> S            number -> N (finite, within +-Number.MAX_SAFE_INTEGER)   bigint -> N
 *   boolean -> BOOL        null -> NULL                                          Uint8Array (Buffer) -> B
 *   array -> L             plain object (constructor Object, or none) -> M
 *
 * Reading, N becomes a number, or a bigint outside the safe integer range (as the SDK does).
 * In maps and lists, functions are skipped and `undefined` is skipped with
 * `{ removeUndefinedValues: true }`, else refused (as the SDK does). Everything else is refused
 * with an UnstorableValueError: NaN and infinities, unsafe integers, Date and other class
 * instances, and (no store keeps them, unlike the SDK) Set, Map and the other typed arrays. The
 * SDK's other options (convertEmptyValues, wrapNumbers, ...) are not offered: no store uses them.
 * A refusal names the kind of value (message, `kind`) and where it was (`path`), never the value
 * itself (it may be PHI).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** What `unmarshall` returns for one attribute: like the SDK's NativeAttributeValue, untyped so a store states the shape it wrote. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type StoredValue = any;

export interface MarshallOptions {
  /** skip `undefined` in maps and lists instead of refusing it */
  removeUndefinedValues?: boolean;
}

/** A value that has no DynamoDB attribute value here (or an attribute value that has no value here). */
export class UnstorableValueError extends Error {
  override readonly name = 'UnstorableValueError';
  /** where the value was: `.record.items[2]`; '' at the top level */
  path = '';
  constructor(
    /** what it was, without the value: `a Date`, `NaN`, `an unsafe integer` */
    readonly kind: string,
  ) {
    super(`no DynamoDB attribute value for ${kind}`);
  }
}

/** rethrows `error`; a refusal learns it was inside `segment` (`.key`, `[2]`): the path is built only when a value is refused */
function inside(segment: string, error: unknown): never {
  if (error instanceof UnstorableValueError) error.path = segment + error.path;
  throw error;
}

function kindOf(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? 'an unsafe integer' : String(value);
  const name = (value as { constructor?: { name?: string } } | undefined)?.constructor?.name;
  return value === undefined ? 'undefined' : name ? `a ${name}` : typeof value;
}

function toAttribute(value: unknown, removeUndefined: boolean | undefined): AttributeValue {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'number':
      if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) break;
      return { N: String(value) };
    case 'bigint':
      return { N: String(value) };
    case 'boolean':
      return { BOOL: value };
    case 'object':
      if (value === null) return { NULL: true };
      if (Array.isArray(value)) {
        const list: AttributeValue[] = [];
        value.forEach((item, i) => {
          try {
            if (typeof item !== 'function' && (item !== undefined || !removeUndefined)) list.push(toAttribute(item, removeUndefined));
          } catch (error) {
            inside(`[${i}]`, error);
          }
        });
        return { L: list };
      }
      if (value instanceof Uint8Array) return { B: value };
      if (!value.constructor || value.constructor.name === 'Object') return { M: toMap(value, removeUndefined) };
  }
  throw new UnstorableValueError(kindOf(value));
}

function toMap(value: object, removeUndefined: boolean | undefined): Record<string, AttributeValue> {
  const map: Record<string, AttributeValue> = {};
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    try {
      if (typeof item !== 'function' && (item !== undefined || !removeUndefined)) map[key] = toAttribute(item, removeUndefined);
    } catch (error) {
      inside(`.${key}`, error);
    }
  }
  return map;
}

/** A record (a plain object) as a DynamoDB item, key or ExpressionAttributeValues map. */
export function marshall(record: object, options?: MarshallOptions): Record<string, AttributeValue> {
  const attribute = toAttribute(record, options?.removeUndefinedValues);
  if (!attribute.M) throw new UnstorableValueError(kindOf(record));
  return attribute.M;
}

function fromAttribute(attribute: AttributeValue): StoredValue {
  if (attribute.S !== undefined) return attribute.S;
  if (attribute.N !== undefined) {
    const number = Number(attribute.N);
    return Math.abs(number) > Number.MAX_SAFE_INTEGER && Number.isFinite(number) ? BigInt(attribute.N) : number;
  }
  if (attribute.BOOL !== undefined) return attribute.BOOL;
  if (attribute.NULL !== undefined) return null;
  if (attribute.M !== undefined) return unmarshall(attribute.M);
  if (attribute.L !== undefined)
    return attribute.L.map((item, i) => {
      try {
        return fromAttribute(item);
      } catch (error) {
        return inside(`[${i}]`, error);
      }
    });
  if (attribute.B !== undefined) return attribute.B;
  throw new UnstorableValueError(`type ${Object.keys(attribute)}`);
}

/** A DynamoDB item (or key, or LastEvaluatedKey) as a record. */
export function unmarshall(item: Record<string, AttributeValue>): Record<string, StoredValue> {
  const record: Record<string, StoredValue> = {};
  for (const key in item) {
    try {
      record[key] = fromAttribute(item[key]!);
    } catch (error) {
      inside(`.${key}`, error);
    }
  }
  return record;
}
