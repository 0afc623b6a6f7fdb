/**
 * Every Lambda bundle within its own-code rule (lib/config/bundle-budgets.ts, issue 31 item 5):
 * own code (lib/, functions/ and packages outside the AWS SDK) at most 15 % of the SDK code in the
 * same minified bundle, or the function's own budget in KB. Weighed with the deployed esbuild options.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bundleFunction } from './support/function-bundle';
import { BUDGET_SLACK, OWN_CODE_SHARE_OF_SDK, OwnCodeBudgets } from '../lib/config/bundle-budgets';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints } from '../lib/config/service';

const root = path.resolve(__dirname, '..');

/** The AWS SDK: the @aws-sdk/client-* packages and every package they depend on (package-lock.json). */
function sdkPackages(): Set<string> {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dependencies?: Record<string, string> }>;
  };
  const seen = new Set<string>();
  const queue = Object.keys(lock.packages)
    .filter((key) => key.startsWith('node_modules/@aws-sdk/client-'))
    .map((key) => key.slice('node_modules/'.length));
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    queue.push(...Object.keys(lock.packages[`node_modules/${name}`]?.dependencies ?? {}));
  }
  return seen;
}

function packageOf(input: string): string | undefined {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const parts = input.slice(at + 'node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

interface Weight {
  name: string;
  own: number;
  sdk: number;
}

const names = [AuthorizerFunction.name, ...HttpEndpoints.map((e) => e.name), ...BackgroundFunctions.map((f) => f.name)];
const weights = new Map<string, Weight>();

beforeAll(async () => {
  const sdk = sdkPackages();
  for (const name of names) {
    const { inputs } = await bundleFunction(name, { minify: true });
    let own = 0;
    let sdkBytes = 0;
    for (const [input, bytes] of inputs) {
      const pkg = packageOf(input);
      if (pkg !== undefined && sdk.has(pkg)) sdkBytes += bytes;
      else own += bytes;
    }
    weights.set(name, { name, own, sdk: sdkBytes });
  }
}, 120_000);

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

/**
 * Own code a function may carry by the default rule: its whole bundle within 1.15x of its SDK code;
 * a function without an SDK client within 1.15x of the smallest SDK code of any function (as the
 * bench compares it with the smallest floor).
 */
function defaultAllowance(weight: Weight): number {
  const reference = weight.sdk > 0 ? weight.sdk : Math.min(...[...weights.values()].map((w) => w.sdk).filter((b) => b > 0));
  return (1 + OWN_CODE_SHARE_OF_SDK) * reference - weight.sdk;
}

describe('own code beside the SDK in each bundle (lib/config/bundle-budgets.ts)', () => {
  it('every function is within its budget, or within 15 % of its SDK code', () => {
    const over = [...weights.values()]
      .map((w) => ({ w, allowed: OwnCodeBudgets[w.name] ? OwnCodeBudgets[w.name]!.kb * 1024 : defaultAllowance(w) }))
      .filter(({ w, allowed }) => w.own > allowed)
      .map(({ w, allowed }) => `${w.name}: ${kb(w.own)} KB own code, allowed ${kb(allowed)} KB`);
    expect(over).toEqual([]);
  });

  it('a budget is only for a function the default share does not cover, and at most 5 % above what it carries', () => {
    const stale = Object.entries(OwnCodeBudgets).flatMap(([name, budget]) => {
      const w = weights.get(name);
      if (!w) return [`${name}: no such function`];
      if (w.own <= defaultAllowance(w)) return [`${name}: ${kb(w.own)} KB is within the default share: remove its budget`];
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
