/* eslint-disable @typescript-eslint/no-explicit-any -- the synthesised CloudFormation template is untyped JSON */
/**
 * Why handled 5xx need their own alarm: an HTTP function that catches an error answers 500/503 itself, so Lambda's Errors
 * metric (and its alarm) never sees it. Each HTTP function gets a metric filter on its own log
 * group counting its `request.completed` lines with status >= 500, and an alarm on that metric.
 * The filter pattern is checked against the line the real response middleware writes
 * (lib/http/middleware/http-responses.ts), so a renamed event or field fails here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Context } from 'aws-lambda';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints } from '../lib/config/service';
import { HttpProblem } from '../lib/http/problem';
import { httpResponses } from '../lib/http/middleware/http-responses';
import { setRequestState, type MiddyRequest } from '../lib/http/request-state';
import { setLogSink } from '../lib/observability/logger';
import { HANDLED_5XX_FILTER_PATTERN, RUNBOOK_SECTIONS, handled5xxMetricName, headingAnchor } from './alarms';
import { logicalIdOf, removeAssembly, resourcesOfType, synthesize, type Synthesized } from './testing';

let s: Synthesized;
beforeAll(() => {
  s = synthesize({ context: { stage: 'prod', alarmEmail: 'oncall@example.org' }, bundle: false });
}, 120_000);
afterAll(() => removeAssembly(s));

const PREFIX = 'interop-prod';
const fnId = (name: string) => logicalIdOf(s.stack.functions[name]!.fn);
const alarms = () => resourcesOfType(s.alarms.json, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties!);
const filters = () => resourcesOfType(s.alarms.json, 'AWS::Logs::MetricFilter').map(([, f]) => f.Properties!);

/**
 * The subset of CloudWatch Logs JSON filter patterns the alarms use: `{ $.a = "x" && $.b >= 500 }`
 * (conditions joined by &&; string values quoted, numbers bare). Anything else throws, so a
 * pattern this cannot read fails the test instead of passing it.
 */
function matchesJsonPattern(pattern: string, line: string): boolean {
  const body = /^\{\s*(.+?)\s*\}$/.exec(pattern)?.[1];
  if (!body) throw new Error(`not a JSON filter pattern: ${pattern}`);
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return false;
  }
  return body.split('&&').every((condition) => {
    const m = /^\s*\$\.([A-Za-z0-9_]+)\s*(=|!=|>=|<=|>|<)\s*("[^"]*"|-?\d+(?:\.\d+)?)\s*$/.exec(condition);
    if (!m) throw new Error(`condition not understood: ${condition}`);
    const [, field, op, raw] = m as unknown as [string, string, string, string];
    const value = event[field!];
    if (raw.startsWith('"')) {
      const expected = raw.slice(1, -1);
      if (op === '=') return value === expected;
      if (op === '!=') return value !== expected;
      throw new Error(`operator ${op} on a string in ${condition}`);
    }
    if (typeof value !== 'number') return false;
    const n = Number(raw);
    return op === '=' ? value === n : op === '!=' ? value !== n : op === '>=' ? value >= n : op === '<=' ? value <= n : op === '>' ? value > n : value < n;
  });
}

/** The log lines the real response middleware writes for one request that ends with `outcome`. */
async function logLinesFor(outcome: { error: unknown } | { statusCode: number }): Promise<string[]> {
  const lines: string[] = [];
  const previous = setLogSink((line) => lines.push(line));
  // what the stage deploys (info outside dev, debug in dev); test/setup-env.js quiets tests with warn
  const level = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = 'info';
  try {
    const request: MiddyRequest = { event: {} as never, context: {} as Context, internal: {} };
    setRequestState(request, { endpoint: HttpEndpoints[0]!, requestId: 'req-1', requestIdSupplied: false, startedAt: 0, now: new Date(0) });
    const middleware = httpResponses();
    if ('error' in outcome) {
      request.error = outcome.error;
      await middleware.onError(request);
    } else {
      request.response = { statusCode: outcome.statusCode, body: '' };
      await middleware.after(request);
    }
  } finally {
    setLogSink(previous);
    process.env.LOG_LEVEL = level;
  }
  return lines;
}

describe('handled 5xx of each HTTP function: every one raises an alarm that names its runbook', () => {
  test('one metric filter per HTTP function, on its own log group, counting request lines with status >= 500', () => {
    const http = filters().filter((f) => f.FilterPattern === HANDLED_5XX_FILTER_PATTERN);
    expect(http).toHaveLength(HttpEndpoints.length);
    for (const e of HttpEndpoints) {
      const found = http.filter((f) => f.MetricTransformations[0].MetricName === handled5xxMetricName(e.name));
      expect({ name: e.name, count: found.length }).toEqual({ name: e.name, count: 1 });
      // the log group is named through the function, so the filter waits for the function and its log group
      expect(found[0]!.LogGroupName).toEqual({ 'Fn::Join': ['', ['/aws/lambda/', { Ref: fnId(e.name) }]] });
      // the name the function really logs to (infra/service-function.ts)
      const logGroup = s.stack.functions[e.name]!.logGroup.node.defaultChild as any;
      expect(s.stack.resolve(logGroup.logGroupName)).toBe(`/aws/lambda/${PREFIX}-${e.name}`);
      expect(found[0]!.MetricTransformations[0]).toMatchObject({ MetricNamespace: `Interop/${PREFIX}`, MetricValue: '1' });
    }
    // the authorizer and the background functions answer no HTTP response of their own
    for (const name of [AuthorizerFunction.name, ...BackgroundFunctions.map((b) => b.name)]) {
      expect(http.some((f) => f.MetricTransformations[0].MetricName === handled5xxMetricName(name))).toBe(false);
    }
  });

  test('one alarm per HTTP function on its metric: any handled 5xx in 5 minutes, to the topic, with its runbook section', () => {
    const readme = fs.readFileSync(path.join(__dirname, 'README.md'), 'utf8');
    expect(readme).toContain(`### ${RUNBOOK_SECTIONS.handled5xx}\n`);
    for (const e of HttpEndpoints) {
      const alarm = alarms().find((a) => a.AlarmName === `${PREFIX}-${e.name}-handled-5xx`);
      expect(alarm).toMatchObject({
        Namespace: `Interop/${PREFIX}`,
        MetricName: handled5xxMetricName(e.name),
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: logicalIdOf(s.stack.alarms.topic) }],
      });
      expect(alarm!.AlarmDescription).toMatch(new RegExp(`Runbook: infra/README\\.md#${headingAnchor(RUNBOOK_SECTIONS.handled5xx)}$`));
    }
    expect(alarms().filter((a) => String(a.AlarmName).endsWith('-handled-5xx'))).toHaveLength(HttpEndpoints.length);
  });

  test('the dashboard graphs every HTTP function’s handled 5xx', () => {
    const [[, dashboard]] = resourcesOfType(s.alarms.json, 'AWS::CloudWatch::Dashboard') as [[string, any]];
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const e of HttpEndpoints) expect(body).toContain(handled5xxMetricName(e.name));
  });

  test('the pattern matches the line the response middleware writes for a 500 and a 503, and not for a 4xx or a 2xx', async () => {
    const counted = async (outcome: { error: unknown } | { statusCode: number }) =>
      (await logLinesFor(outcome)).filter((line) => matchesJsonPattern(HANDLED_5XX_FILTER_PATTERN, line)).length;
    expect(await counted({ error: new Error('boom') })).toBe(1);
    expect(await counted({ error: new HttpProblem('unavailable', 'a dependency is unavailable') })).toBe(1);
    expect(await counted({ statusCode: 502 })).toBe(1);
    expect(await counted({ error: new HttpProblem('notFound', 'no such record') })).toBe(0);
    expect(await counted({ statusCode: 200 })).toBe(0);
    // the line carries ids and the status only: the function's name, never the error's message
    const [line] = (await logLinesFor({ error: new Error('patient Jane Doe') })).filter((l) => l.includes('request.completed'));
    expect(JSON.parse(line!)).toMatchObject({ event: 'request.completed', status: 500, function: HttpEndpoints[0]!.name });
    expect(line).not.toContain('Jane');
  });

  test('at LOG_LEVEL warn the line is gone (why the stack warns about -c logLevel=warn)', async () => {
    const lines: string[] = [];
    const previous = setLogSink((line) => lines.push(line));
    const level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = 'warn';
    try {
      const request: MiddyRequest = { event: {} as never, context: {} as Context, internal: {} };
      request.response = { statusCode: 503, body: '' };
      await httpResponses().after(request);
    } finally {
      setLogSink(previous);
      process.env.LOG_LEVEL = level;
    }
    expect(lines.filter((line) => matchesJsonPattern(HANDLED_5XX_FILTER_PATTERN, line))).toEqual([]);
    const warningsOf = (synthesized: Synthesized) =>
      synthesized.app
        .synth()
        .getStackArtifact(synthesized.stack.artifactId)
        .messages.filter((m) => m.level === 'warning')
        .map((m) => String(m.entry.data));
    const warned = synthesize({ context: { stage: 'prod', alarmEmail: 'oncall@example.org', logLevel: 'warn' }, bundle: false });
    try {
      expect(warningsOf(warned)).toEqual([expect.stringContaining('the handled-5xx alarms count: they cannot fire')]);
    } finally {
      removeAssembly(warned);
    }
    // at the default (info in prod) there is nothing to warn about
    expect(warningsOf(s)).toEqual([]);
  }, 120_000);

  test('every HTTP function runs the shared pipeline (lib/http/endpoint.ts), which writes the line the filter counts', () => {
    for (const e of HttpEndpoints) {
      const source = fs.readFileSync(path.join(__dirname, '..', 'functions', `${e.name}.ts`), 'utf8');
      expect({
        name: e.name,
        pipeline: new RegExp(`\\b(?:httpEndpoint|fhirEndpoint|storelessHttpEndpoint|storelessFhirEndpoint)\\(\\s*${e.name}Route\\b`).test(source),
      }).toEqual({ name: e.name, pipeline: true });
    }
  });

  test('the evaluator is strict: a pattern it cannot read throws', () => {
    expect(() => matchesJsonPattern('{ $.status IN [500] }', '{}')).toThrow(/not understood/);
    expect(matchesJsonPattern('{ $.status >= 500 }', '{"status":"500"}')).toBe(false);
  });
});
