/**
 * Canonical form of an encryption context: the one byte string both sides of an AES-GCM
 * operation (or of a KMS call) agree on, whatever order the caller built the object in.
 *
 * canonicalContext({ b: '2', a: '1' }) === '{"a":"1","b":"2"}'
 *
 * Rules: a plain object of string -> string, keys sorted by UTF-16 code unit order (the default
 * Array#sort order, which is also what JSON producers in other languages get from a byte sort of
 * ASCII keys), no whitespace, JSON string escaping as JSON.stringify does it. The string is built
 * by hand from the sorted entries, so keys such as `__proto__` cannot be swallowed by an object
 * literal on the way.
 *
 * Validation errors name the problem, never a value: a context carries record identifiers.
 */

export type EncryptionContext = Readonly<Record<string, string>>;

export function assertEncryptionContext(ctx: unknown, label = 'encryption context'): asserts ctx is EncryptionContext {
  if (ctx === null || typeof ctx !== 'object' || Array.isArray(ctx)) {
    throw new TypeError(`${label} must be an object of string values`);
  }
  const proto = Object.getPrototypeOf(ctx);
  if (proto !== Object.prototype && proto !== null) {
    throw new TypeError(`${label} must be a plain object`);
  }
  for (const key of Object.keys(ctx)) {
    if (key.length === 0) throw new TypeError(`${label} must not have an empty key`);
    if (typeof (ctx as Record<string, unknown>)[key] !== 'string') {
      throw new TypeError(`${label} values must be strings`);
    }
  }
}

/** Canonical JSON of an encryption context: sorted keys, no whitespace. Throws TypeError on a non string map. */
export function canonicalContext(ctx: Record<string, string> | undefined | null): string {
  const value = ctx ?? {};
  assertEncryptionContext(value);
  const keys = Object.keys(value).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (i > 0) out += ',';
    out += JSON.stringify(key) + ':' + JSON.stringify(value[key]);
  }
  return out + '}';
}

/** True when both contexts have the same canonical form (same keys, same values, any order). */
export function contextsEqual(a: Record<string, string> | undefined | null, b: Record<string, string> | undefined | null): boolean {
  return canonicalContext(a) === canonicalContext(b);
}

/**
 * A sorted, validated copy of a context (safe to store and to serialise). Object.fromEntries
 * defines own data properties, so a `__proto__` key stays a key.
 */
export function copyContext(ctx: Record<string, string> | undefined | null): Record<string, string> {
  const value = ctx ?? {};
  assertEncryptionContext(value);
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, value[key] as string]),
  );
}
