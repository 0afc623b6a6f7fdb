/**
 * Headroom under CloudFormation's per-stack limits (500 resources, 200 parameters; a nested stack
 * has the same limits as any stack). The stage stack keeps the functions, API, data stores and the
 * alarm topic; the nested alarms stack (infra/alarms.ts) keeps the alarms and the dashboard, which
 * grow by 3 alarms per function. Bundling is skipped: only the template shape counts here.
 *
 * The budget is 90 % of each limit, so that a failing test leaves room to split further before a
 * deployment is refused. Counts are printed (see infra/README.md, "Stack layout").
 */
import * as path from 'node:path';
import { HttpEndpoints, Scopes, type HttpEndpoint } from '../lib/config/service';
import { DEFAULT_FUNCTIONS_DIR, entryPath } from './service-function';
import { removeAssembly, synthesize, type Synthesized } from './testing';

const STUB = path.join(__dirname, 'test-fixtures', 'stub-handler.ts');

/** CloudFormation's limits per stack (nested stacks included) */
const MAX_RESOURCES = 500;
const MAX_PARAMETERS = 200;
/** what the tests allow: 90 % of the limits */
const RESOURCE_BUDGET = 450;
const PARAMETER_BUDGET = 180;
/** the parent must take at least this many more endpoints before CloudFormation refuses it */
const MORE_ENDPOINTS = 10;

/** made-up endpoints, each on a new top-level path (a new API resource, its method and the 405 ANY method) */
const probes = (count: number): HttpEndpoint[] =>
  Array.from({ length: count }, (_, i) => ({
    kind: 'http',
    name: `headroomProbe${i}`,
    method: 'GET',
    path: `/headroomProbe${i}`,
    scope: Scopes.inboxRead,
    needs: { tables: { forms: ['GetItem'] } },
    memoryMb: 128,
    timeoutSeconds: 10,
  }));

interface Counts {
  parent: number;
  nested: number;
  nestedParameters: number;
  parentParameters: number;
}
const counts = (s: Synthesized): Counts => ({
  parent: Object.keys(s.json.Resources).length,
  nested: Object.keys(s.alarms.raw.Resources).length,
  nestedParameters: Object.keys(s.alarms.raw.Parameters ?? {}).length,
  parentParameters: Object.keys(s.json.Parameters ?? {}).length,
});

describe('stack limits on the prod stage', () => {
  let today: Counts;
  let more: Counts;
  beforeAll(() => {
    const context = { stage: 'prod', alarmEmail: 'oncall@example.org' };
    const s = synthesize({ context, bundle: false });
    try {
      today = counts(s);
    } finally {
      removeAssembly(s);
    }
    const extra = probes(MORE_ENDPOINTS);
    const names = new Set(extra.map((e) => e.name));
    const grown = synthesize({
      context,
      bundle: false,
      props: { httpEndpoints: [...HttpEndpoints, ...extra], entryFor: (name) => (names.has(name) ? STUB : entryPath(DEFAULT_FUNCTIONS_DIR, name)) },
    });
    try {
      more = counts(grown);
    } finally {
      removeAssembly(grown);
    }
    const perEndpointParent = (more.parent - today.parent) / MORE_ENDPOINTS;
    const perEndpointNested = (more.nested - today.nested) / MORE_ENDPOINTS;
    console.log(
      [
        `prod stage stack: ${today.parent} resources, ${today.parentParameters} parameters`,
        `nested alarms stack: ${today.nested} resources, ${today.nestedParameters} parameters`,
        `per endpoint (new top-level path): parent +${perEndpointParent}, nested +${perEndpointNested} resources, +${(more.nestedParameters - today.nestedParameters) / MORE_ENDPOINTS} nested parameter(s)`,
        `with ${MORE_ENDPOINTS} more endpoints: parent ${more.parent}, nested ${more.nested} resources, ${more.nestedParameters} nested parameters`,
        `endpoints that still fit in the parent: ${Math.floor((RESOURCE_BUDGET - today.parent) / perEndpointParent)} within the ${RESOURCE_BUDGET} budget, ${Math.floor((MAX_RESOURCES - today.parent) / perEndpointParent)} within the ${MAX_RESOURCES} limit`,
      ].join('\n'),
    );
  }, 300_000);

  test(`the stage stack and the nested alarms stack stay within the budget of ${RESOURCE_BUDGET} resources and ${PARAMETER_BUDGET} parameters`, () => {
    expect(today.parent).toBeLessThanOrEqual(RESOURCE_BUDGET);
    expect(today.nested).toBeLessThanOrEqual(RESOURCE_BUDGET);
    expect(today.nestedParameters).toBeLessThanOrEqual(PARAMETER_BUDGET);
    expect(today.parentParameters).toBeLessThanOrEqual(PARAMETER_BUDGET);
    // the split is real: the alarms left the stage stack (3 per function, 129 today)
    expect(today.nested).toBeGreaterThan(100);
  });

  test(`${MORE_ENDPOINTS} more endpoints still fit: the stage stack stays below ${MAX_RESOURCES} resources, the nested stack within its budgets`, () => {
    expect(more.parent).toBeLessThanOrEqual(MAX_RESOURCES);
    expect(more.nested).toBeLessThanOrEqual(RESOURCE_BUDGET);
    expect(more.nestedParameters).toBeLessThanOrEqual(PARAMETER_BUDGET);
    expect(more.nestedParameters).toBeLessThan(MAX_PARAMETERS);
    // each endpoint costs the parent its function, role, policy, log group, permission, method, API resource and 405 method
    expect(more.parent - today.parent).toBeLessThanOrEqual(8 * MORE_ENDPOINTS);
    // and the nested stack its 3 alarms
    expect(more.nested - today.nested).toBe(3 * MORE_ENDPOINTS);
  });
});
