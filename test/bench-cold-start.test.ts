/**
 * The cold-start measurement's bookkeeping (bench/cold-start.ts): which end point an init figure
 * has, when a run is no measurement, the environment a function gets, and which SDK clients a
 * function could call at all.
 */
import { callableClients, childEnv, functionEnv, needsOf, responseMeasurable, summarizeRuns, type ChildResult } from '../bench/cold-start';
import { Env } from '../lib/config/service';

const sdkCall = (firstCallMs: number): ChildResult => ({
  importMs: 40,
  firstCallMs,
  invokeMs: firstCallMs - 40,
  responseMs: null,
  bootMs: 30,
  reason: 'sdk-call',
  target: 'DynamoDB_20120810.Query',
});
const returned = (responseMs: number, status: number): ChildResult => ({
  importMs: 40,
  firstCallMs: null,
  invokeMs: null,
  responseMs,
  bootMs: 30,
  reason: 'returned-without-sdk-call',
  status,
});

describe('cold start: init end points', () => {
  it('init = the median to the first SDK request when every run reached one', () => {
    const t = summarizeRuns([sdkCall(60), sdkCall(70), sdkCall(65)]);
    expect(t).toMatchObject({ firstCallMs: 65, responseMs: null, initMs: 65, initEnd: 'first-sdk-call', reachedSdkCall: true });
  });

  it('init = the median to the response for a function that made no SDK call and served (below 500)', () => {
    expect(summarizeRuns([returned(50, 200), returned(54, 200), returned(52, 200)])).toMatchObject({
      firstCallMs: null,
      responseMs: 52,
      initMs: 52,
      initEnd: 'response',
      responseStatus: 200,
    });
    expect(summarizeRuns([returned(50, 404), returned(51, 404)])).toMatchObject({ initMs: 50.5, initEnd: 'response', responseStatus: 404 });
  });

  it('no measurement: a 5xx (the function did not serve), a thrown error, or runs that ended differently', () => {
    expect(summarizeRuns([returned(50, 503), returned(51, 503)])).toMatchObject({ initMs: null, initEnd: null });
    expect(summarizeRuns([{ ...returned(50, 200), reason: 'threw-without-sdk-call', responseMs: null }])).toMatchObject({ initMs: null, initEnd: null });
    expect(summarizeRuns([sdkCall(60), returned(50, 200)])).toMatchObject({ initMs: null, initEnd: null });
  });

  it('init to response only for a function with no callable client, answering as its route does', () => {
    // a table function that answered without an SDK call (its bench event refused early) is not measured
    const exportsNote = responseMeasurable('exportHl7Note', needsOf('exportHl7Note'));
    expect(summarizeRuns([returned(20, 403), returned(21, 403)], exportsNote)).toMatchObject({ initMs: null, initEnd: null });
    expect(summarizeRuns([returned(20, 200)], exportsNote)).toMatchObject({ initMs: null, initEnd: null });
    const page = responseMeasurable('serveOpenApiDocument', needsOf('serveOpenApiDocument'));
    expect(summarizeRuns([returned(20, 200), returned(22, 200)], page)).toMatchObject({ initMs: 21, initEnd: 'response' });
    expect(summarizeRuns([returned(20, 400)], page)).toMatchObject({ initMs: null, initEnd: null });
    const notFound = responseMeasurable('fhirRouteNotFound', needsOf('fhirRouteNotFound'));
    expect(summarizeRuns([returned(20, 404)], notFound)).toMatchObject({ initMs: 20, initEnd: 'response' });
  });
});

describe('cold start: environment and clients', () => {
  it('the staff sign-in settings go to the authorizer and the inbox page only, as infra gives them', () => {
    const base = childEnv();
    expect(base[Env.staffClientId]).toBeUndefined();
    for (const name of ['authorizer', 'serveInboxPage']) {
      const env = functionEnv(base, name);
      for (const key of [Env.staffClientId, Env.staffAuthorizeUrl, Env.staffTokenUrl, Env.staffIssuer]) expect(env[key]).toBeTruthy();
    }
    expect(functionEnv(base, 'listInteropInbox')[Env.staffClientId]).toBeUndefined();
  });

  it('DynamoDB is callable only with a table in needs', () => {
    expect(callableClients(needsOf('fhirMetadata'))).toEqual([]);
    expect(callableClients(needsOf('listInteropInbox'))).toEqual(['dynamodb']);
    expect(callableClients(needsOf('sweepPendingPackets'))).toEqual(['dynamodb', 'sqs']);
  });
});
