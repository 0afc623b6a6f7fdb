import { OwnCodeBudgets, defaultOwnCodeAllowance, ownCodeAllowance, weighBundle } from './bundle-budgets';

describe('bundle budgets', () => {
  const sdk = new Set(['@aws-sdk/client-dynamodb', '@smithy/core', 'tslib']);

  it('weighs lib/ and packages outside the SDK as own code, the SDK closure as SDK code', () => {
    expect(weighBundle({ app: 30, '@middy/core': 2, '@aws-sdk/client-dynamodb': 60, '@smithy/core': 30, tslib: 10 }, sdk)).toEqual({ own: 32, sdk: 100 });
  });

  it('allows 15 % of the SDK code by default, and 1.15x of the smallest SDK code to a function without one', () => {
    expect(defaultOwnCodeAllowance({ own: 0, sdk: 1000 }, 300)).toBeCloseTo(150);
    expect(defaultOwnCodeAllowance({ own: 0, sdk: 0 }, 300)).toBeCloseTo(345);
    expect(ownCodeAllowance('exportHl7Note', { own: 151, sdk: 1000 }, 300)).toBeLessThan(151);
  });

  it('a named budget replaces the default share', () => {
    const [name, budget] = Object.entries(OwnCodeBudgets)[0]!;
    expect(ownCodeAllowance(name, { own: 0, sdk: 1000 }, 300)).toBe(budget.kb * 1024);
    expect(budget.carries.length).toBeGreaterThan(20);
  });
});
