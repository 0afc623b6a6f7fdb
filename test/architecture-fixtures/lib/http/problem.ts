/** Fixture for test/architecture.test.ts: stands in for lib/http. */
export const status = 400;
