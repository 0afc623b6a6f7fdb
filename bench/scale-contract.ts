/**
 * Issue 31 item 4 (scale with the chart and the inbox): the shape bench/scale.ts returns to
 * bench/run.ts, so the measurement and the report are written apart.
 */
export interface ScaleTargetRow {
  /** one line: the measured figures (sizes, times, read units, memory, growth ratios) */
  result: string;
  /** true when every measured path grows no worse than linearly and pages where a response would pass the size caps */
  met: boolean;
}

export interface ScaleMeasurement {
  row: ScaleTargetRow;
  /** the report's section for this measurement, markdown lines (method, table, notes) */
  section: string[];
  /** every figure, for bench/results.json */
  json: unknown;
}

export interface ScaleOptions {
  /** small sizes, to check the plumbing (results are not representative) */
  quick: boolean;
  progress: (line: string) => void;
}
