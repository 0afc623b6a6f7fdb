/**
 * Canonical JSON of a parsed JSON value: object keys sorted (UTF-16 code unit order), no
 * whitespace, strings and numbers as JSON.stringify writes them. Two bodies that differ only in
 * key order or whitespace have the same canonical form, so the same fingerprint.
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  write(value, parts);
  return parts.join('');
}

function write(value: unknown, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    // JSON.parse output only: string, number, boolean, null
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, i) => {
      if (i > 0) out.push(',');
      write(item, out);
    });
    out.push(']');
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  out.push('{');
  keys.forEach((key, i) => {
    if (i > 0) out.push(',');
    out.push(JSON.stringify(key), ':');
    write(record[key], out);
  });
  out.push('}');
}
