/**
 * events/ (README "Local events"): every function has a saved event, and every event file runs
 * through `npm run invoke` (scripts/invoke.ts main, in process) against the local stack with the
 * answer its name promises, in the order the README gives: events that need an id made at run
 * time (a lab result, a held record) get it with `--set NAME=VALUE` from an earlier event's answer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints } from '../../lib/config/service';
import type { LocalStack } from '../../lib/local/stack';
import { main as invoke } from '../../scripts/invoke';
import { startTestStack } from '../support/local-stack';

const EVENTS = path.resolve(__dirname, '..', '..', 'events');
const files = readdirSync(EVENTS)
  .filter((f) => f.endsWith('.json'))
  .sort();
/** `exportHl7Note.forbidden.json` -> `exportHl7Note` */
const functionOf = (file: string) => file.split('.')[0]!;
const functionNames = [AuthorizerFunction.name, ...HttpEndpoints.map((e) => e.name), ...BackgroundFunctions.map((f) => f.name)];

describe('events/: one saved event per function', () => {
  it.each(functionNames)('%s has an event file named after it', (name) => {
    expect(files).toContain(`${name}.json`);
  });

  it('every event file is named after a function, and an endpoint event after its method and path', () => {
    for (const file of files) {
      expect([file, functionNames.includes(functionOf(file))]).toEqual([file, true]);
      const endpoint = HttpEndpoints.find((e) => e.name === functionOf(file));
      if (!endpoint) continue;
      const event = JSON.parse(readFileSync(path.join(EVENTS, file), 'utf8')) as APIGatewayProxyEvent;
      expect([file, event.httpMethod, event.resource]).toEqual([file, endpoint.method, endpoint.path]);
    }
  });
});

describe('npm run invoke --set', () => {
  it.each([
    [
      ['matchFormPackets', 'events/matchFormPackets.json', '--set', 'packetId=fp_1'],
      /^--set applies to an endpoint's event; matchFormPackets is not an endpoint/,
    ],
    [['exportHl7LabResult', 'events/exportHl7LabResult.json', '--set', 'resultId'], /^--set takes NAME=VALUE, got "resultId"/],
  ])('%j: wrong usage, exit 2, nothing run', async (argv, message) => {
    let err = '';
    const code = await invoke(argv, { out: () => undefined, err: (t) => (err += t) });
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(err).toMatch(/\(see `npm run invoke -- --help`\)\n$/);
  });
});

describe('events/: each runs with npm run invoke against the local stack', () => {
  let stack: LocalStack;
  const ran = new Set<string>();
  beforeAll(async () => {
    // the inbox page (serveInboxPage) needs the staff sign-in provider
    stack = await startTestStack({ staffSignIn: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** `npm run invoke -- FUNCTION events/FILE [--set ...]`: exit code and the printed result */
  async function run(file: string, set: string[] = []): Promise<{ code: number; result: { statusCode?: number; body?: string } & Record<string, unknown> }> {
    let out = '';
    let err = '';
    const code = await invoke([functionOf(file), path.join(EVENTS, file), ...set.flatMap((s) => ['--set', s])], {
      out: (t) => (out += t),
      err: (t) => (err += t),
    });
    expect([file, err]).toEqual([file, '']);
    ran.add(file);
    return { code, result: JSON.parse(out) as { statusCode?: number; body?: string } };
  }
  const status = async (file: string, set: string[] = []) => {
    const { code, result } = await run(file, set);
    expect([file, code]).toEqual([file, 0]);
    const json = result.body?.startsWith('{') ? (JSON.parse(result.body) as Record<string, unknown>) : undefined;
    return { status: result.statusCode, body: json, text: result.body };
  };

  it('the runs that build on each other, in the README order', async () => {
    // a lab result, then its HL7 export and its FHIR DiagnosticReport (ids made at run time: --set)
    const stored = await status('receiveTestData.json');
    expect(stored.status).toBe(200);
    const resultId = stored.body!.resultId as string;
    expect((await status('exportHl7LabResult.json')).status).toBe(404); // the placeholder id
    const exported = await status('exportHl7LabResult.json', [`resultId=${resultId}`]);
    expect(exported.status).toBe(200);
    expect(exported.text).toMatch(/^MSH\|/);
    const reports = await status('fhirDiagnosticReportSearch.json');
    expect(reports.status).toBe(200);
    const reportId = (reports.body!.entry as Array<{ resource: { id: string } }>)[0]!.resource.id;
    expect((await status('fhirDiagnosticReportRead.json', [`id=${reportId}`])).status).toBe(200);

    // HL7 intake: a result filed to its patient, one held for review, then the held-record routes
    const ack = await status('receiveHl7.json');
    expect([ack.status, ack.text]).toEqual([200, expect.stringContaining('MSA|AA|')]);
    expect((await status('receiveHl7.held.json')).text).toContain('MSA|AA|');
    const held = await status('listHeldRecords.json');
    expect(held.status).toBe(200);
    const heldId = (held.body!.items as Array<{ heldId: string }>)[0]!.heldId;
    for (const file of ['getHeldRecord.json', 'searchHeldPatients.json', 'routeHeldRecord.json'])
      expect([file, (await status(file, [`heldId=${heldId}`])).status]).toEqual([file, 200]);
    // the routed record is a lab result, filed for good: only a routed partner identity has a link to end
    expect((await status('unlinkHeldRecord.json', [`heldId=${heldId}`])).status).toBe(409);

    // a form packet: queued, matched by the worker's event (no background workers here), then the inbox routes
    expect((await status('receiveFormIntakeScope.json')).status).toBe(202);
    expect((await run('matchFormPackets.json')).result).toEqual({ batchItemFailures: [] });
    for (const file of ['getInboxPacket.json', 'getInboxCandidates.json', 'searchInboxPatients.json', 'routeInboxPacket.json', 'listInteropInbox.json'])
      expect([file, (await status(file)).status]).toEqual([file, 200]);
  });

  it('every other event answers as its name says (2xx; .forbidden 403, .invalid 400, fhirRouteNotFound 404)', async () => {
    const expected = (file: string) =>
      file.includes('.forbidden') ? 403 : file.includes('.invalid') ? 400 : functionOf(file) === 'fhirRouteNotFound' ? 404 : undefined;
    const wrong: string[] = [];
    for (const file of files.filter((f) => !ran.has(f))) {
      const { code, result } = await run(file);
      if (code !== 0) wrong.push(`${file}: exit ${code}`);
      const name = functionOf(file);
      if (HttpEndpoints.some((e) => e.name === name)) {
        const want = expected(file);
        const ok = want === undefined ? result.statusCode! >= 200 && result.statusCode! < 300 : result.statusCode === want;
        if (!ok) wrong.push(`${file}: ${result.statusCode} ${String(result.body).slice(0, 200)}`);
      } else if (name === AuthorizerFunction.name) {
        if (!JSON.stringify(result).includes('"Effect":"Allow"')) wrong.push(`${file}: ${JSON.stringify(result).slice(0, 200)}`);
      } else if ('batchItemFailures' in result && (result.batchItemFailures as unknown[]).length) wrong.push(`${file}: ${JSON.stringify(result)}`);
    }
    expect(wrong).toEqual([]);
    expect(ran.size).toBe(files.length);
  });
});
