/**
 * The contract coverage table (operation x status) over everything test/support/contract.ts saw in
 * one jest run. jest.config.js runs `clearContractCoverage` before the run and
 * `reportContractCoverage` after it. The table is printed (and written to
 * .local/contract-coverage/table.txt) after every run; when the run included every integration
 * and reliability suite, an operation whose success status was never seen fails the run.
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { COVERAGE_DIR, UNMATCHED } from './contract';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = path.resolve(__dirname, '..', '..');
export const CONTRACT_SUITES = ['test/integration', 'test/reliability'];

export function clearContractCoverage(): void {
  rmSync(COVERAGE_DIR, { recursive: true, force: true });
}

export interface CoverageReport {
  table: string;
  /** operations whose declared 2xx statuses were not all seen */
  missingSuccess: string[];
  /** declared (operation, status) pairs seen / declared */
  seenPairs: number;
  declaredPairs: number;
  complete: boolean;
}

export function contractCoverage(): CoverageReport | undefined {
  if (!existsSync(COVERAGE_DIR)) return undefined;
  const files = readdirSync(COVERAGE_DIR).filter((f) => f.endsWith('.json'));
  if (files.length === 0) return undefined;
  const seen = new Map<string, number>();
  const testFiles = new Set<string>();
  for (const f of files) {
    const data = JSON.parse(readFileSync(path.join(COVERAGE_DIR, f), 'utf8')) as { testFile: string; seen: Record<string, number> };
    testFiles.add(data.testFile);
    for (const [k, n] of Object.entries(data.seen)) seen.set(k, (seen.get(k) ?? 0) + n);
  }
  const document = JSON.parse(readFileSync(path.join(ROOT, 'docs', 'openapi.json'), 'utf8')) as Json;
  const ops: Array<{ id: string; statuses: string[] }> = [];
  for (const item of Object.values(document.paths as Json))
    for (const op of Object.values(item as Json)) ops.push({ id: (op as Json).operationId, statuses: Object.keys((op as Json).responses) });
  const columns = [...new Set(ops.flatMap((o) => o.statuses))].sort();
  const width = Math.max(...ops.map((o) => o.id.length), UNMATCHED.length);
  const lines = [`${'operation'.padEnd(width)} ${columns.map((c) => c.padStart(6)).join('')}`];
  let seenPairs = 0;
  let declaredPairs = 0;
  const missingSuccess: string[] = [];
  for (const op of ops) {
    const cells = columns.map((c) => {
      if (!op.statuses.includes(c)) return ''.padStart(6);
      declaredPairs++;
      const n = seen.get(`${op.id} ${c}`) ?? 0;
      if (n > 0) seenPairs++;
      else if (c.startsWith('2')) missingSuccess.push(`${op.id} ${c}`);
      return (n > 0 ? String(n) : '-').padStart(6);
    });
    lines.push(`${op.id.padEnd(width)} ${cells.join('')}`);
  }
  const unmatched = [...seen.entries()].filter(([k]) => k.startsWith(UNMATCHED)).map(([k, n]) => `${k.slice(UNMATCHED.length + 1)}: ${n}`);
  if (unmatched.length) lines.push(`${UNMATCHED}: ${unmatched.join(', ')}`);
  lines.push(`declared (operation, status) pairs seen: ${seenPairs} of ${declaredPairs}; '-' = declared, never seen; blank = not declared`);
  const suiteFiles = CONTRACT_SUITES.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `${dir}/${f}`),
  );
  const complete = suiteFiles.every((f) => testFiles.has(f));
  return { table: lines.join('\n'), missingSuccess, seenPairs, declaredPairs, complete };
}

export function reportContractCoverage(): void {
  const report = contractCoverage();
  if (!report) return;
  mkdirSync(COVERAGE_DIR, { recursive: true });
  writeFileSync(path.join(COVERAGE_DIR, 'table.txt'), `${report.table}\n`);
  process.stdout.write(`\nContract coverage (answers checked against docs/openapi.json):\n${report.table}\n`);
  if (report.complete && report.missingSuccess.length > 0) {
    throw new Error(`contract coverage: success status never seen in the integration and reliability suites: ${report.missingSuccess.join(', ')}`);
  }
}
