/**
 * The few statistics the bench reports. Percentiles use linear interpolation between closest
 * ranks (the "R-7" / NumPy default / Excel PERCENTILE.INC definition):
 *   rank h = (n - 1) * p,  value = x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h])
 * so p50 of an even-sized sample is the mean of the two middle values (= the median).
 */

export function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** p in [0, 1]; `values` must already be sorted ascending. */
export function percentileSorted(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  if (p <= 0) return values[0]!;
  if (p >= 1) return values[values.length - 1]!;
  const h = (values.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(values.length - 1, lo + 1);
  return values[lo]! + (h - lo) * (values[hi]! - values[lo]!);
}

export function percentile(values: readonly number[], p: number): number {
  return percentileSorted(sorted(values), p);
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): Summary {
  const s = sorted(values);
  return {
    n: s.length,
    min: s[0] ?? Number.NaN,
    p50: percentileSorted(s, 0.5),
    p90: percentileSorted(s, 0.9),
    p99: percentileSorted(s, 0.99),
    max: s[s.length - 1] ?? Number.NaN,
    mean: mean(s),
  };
}

/** Rounds for JSON output (keeps results.json readable). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function roundSummary(s: Summary, digits = 3): Summary {
  return {
    n: s.n,
    min: round(s.min, digits),
    p50: round(s.p50, digits),
    p90: round(s.p90, digits),
    p99: round(s.p99, digits),
    max: round(s.max, digits),
    mean: round(s.mean, digits),
  };
}

/** Milliseconds since `start` (from process.hrtime.bigint()). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}
