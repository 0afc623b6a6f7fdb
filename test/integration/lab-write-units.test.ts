/**
 * Issue 31 item 2: a single-result `POST /receiveTestData` costs at most 8 DynamoDB write units.
 * Counted, not timed: bench/lab-write-units.ts sends submissions through the real handler on the
 * local stack (dynalite) and prices every write as DynamoDB does (the larger of the item before and
 * after, 1 KB a unit, plus each index entry written or removed), with item sizes as they would be in
 * AWS (a sealed record's local KMS data key blob counted at AWS KMS's 184 bytes).
 */
import { measureLabWriteUnits, TARGET_WRITE_UNITS } from '../../bench/lab-write-units';

it('a single-result submission costs at most 8 write units, per item written as designed', async () => {
  const result = await measureLabWriteUnits(3);
  const units = Object.fromEntries(result.perItem.map((p) => [p.item, p.units]));
  expect(units).toEqual({
    'idempotency record': 2, // claim, completion
    'notification marker': 2, // put before the version, delete once sent
    'current pointer': 2, // the item and its byPatient index entry
    'result version': 1, // one put, never rewritten
    'audit record': 1,
    'rate limit counter (authorizer)': 1,
  });
  // every item the intake writes stays within one write unit's 1 KB, sized as in AWS
  for (const p of result.perItem) expect(p.largestItemBytes).toBeLessThanOrEqual(1024);
  expect(result.intakeUnits).toBeLessThanOrEqual(TARGET_WRITE_UNITS);
}, 60_000);
