/**
 * Every Lambda bundle within its own-code rule (lib/config/bundle-budgets.ts, issue 31 item 5):
 * own code (lib/, functions/ and packages outside the AWS SDK) at most 15 % of the SDK code in the
 * same minified bundle, or the function's own budget in KB. Weighed with the deployed esbuild options.
 */
import path from 'node:path';
import { bundleFunction } from './support/function-bundle';
import { BUDGET_SLACK, OwnCodeBudgets, defaultOwnCodeAllowance, ownCodeAllowance, weighBundle, type BundleWeight } from '../lib/config/bundle-budgets';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints } from '../lib/config/service';
import { packageOfInput, sdkPackages } from '../scripts/sdk-packages';

const root = path.resolve(__dirname, '..');

const names = [AuthorizerFunction.name, ...HttpEndpoints.map((e) => e.name), ...BackgroundFunctions.map((f) => f.name)];
const weights = new Map<string, BundleWeight>();
let smallestSdk = 0;

beforeAll(async () => {
  const sdk = sdkPackages(root);
  for (const name of names) {
    const { inputs } = await bundleFunction(name, { minify: true });
    const bytesByPackage: Record<string, number> = {};
    for (const [input, bytes] of inputs) {
      const pkg = packageOfInput(input) ?? 'app';
      bytesByPackage[pkg] = (bytesByPackage[pkg] ?? 0) + bytes;
    }
    weights.set(name, weighBundle(bytesByPackage, sdk));
  }
  smallestSdk = Math.min(...[...weights.values()].map((w) => w.sdk).filter((b) => b > 0));
}, 120_000);

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

describe('own code beside the SDK in each bundle (lib/config/bundle-budgets.ts)', () => {
  it('every function is within its budget, or within 15 % of its SDK code', () => {
    const over = [...weights]
      .map(([name, w]) => ({ name, w, allowed: ownCodeAllowance(name, w, smallestSdk) }))
      .filter(({ w, allowed }) => w.own > allowed)
      .map(({ name, w, allowed }) => `${name}: ${kb(w.own)} KB own code, allowed ${kb(allowed)} KB`);
    expect(over).toEqual([]);
  });

  it('a budget is only for a function the default share does not cover, and at most 5 % above what it carries', () => {
    const stale = Object.entries(OwnCodeBudgets).flatMap(([name, budget]) => {
      const w = weights.get(name);
      if (!w) return [`${name}: no such function`];
      if (w.own <= defaultOwnCodeAllowance(w, smallestSdk)) return [`${name}: ${kb(w.own)} KB is within the default share: remove its budget`];
      if (budget.kb * 1024 > w.own * (1 + BUDGET_SLACK)) return [`${name}: budget ${budget.kb} KB, carries ${kb(w.own)} KB: lower it`];
      return [];
    });
    expect(stale).toEqual([]);
  });

  it('SDK code is what the SDK clients bring: every function with a client carries some, the storeless none', () => {
    expect(weights.size).toBe(names.length);
    expect(weights.get('exportHl7Note')!.sdk).toBeGreaterThan(200 * 1024);
    expect(weights.get('serveOpenApiDocument')!.sdk).toBe(0);
  });
});
