import { ContainerCache } from './container-cache';

describe('ContainerCache', () => {
  it('builds once per set of inputs and again only when an input changes', () => {
    const cache = new ContainerCache<{ n: number }>();
    let builds = 0;
    const clientA = {};
    const clientB = {};
    const get = (client: object, table: string) => cache.get([client, table], () => ({ n: ++builds }));
    const first = get(clientA, 't1');
    expect(get(clientA, 't1')).toBe(first);
    expect(builds).toBe(1);
    const second = get(clientB, 't1');
    expect(second).not.toBe(first);
    expect(get(clientB, 't2').n).toBe(3);
    expect(get(clientB, 't2').n).toBe(3);
  });

  it('hands the inputs to the builder', () => {
    const cache = new ContainerCache<string>();
    expect(cache.get(['a', 1] as const, ([name, n]) => `${name}${n}`)).toBe('a1');
  });
});
