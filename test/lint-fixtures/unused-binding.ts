// A deliberate violation for test/lint.test.ts: an unused binding (ESLint) written unformatted (Prettier).
export function encodeSomething(value: string): string {
  const unused   = value.length;
  return value;
}
