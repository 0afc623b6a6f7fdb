/**
 * Which usage plan the authorizer names (`usageIdentifierKey`), so staff are metered apart from anonymous callers. Staff
 * authenticated by their ID token get the staff plan's key (STAFF_USAGE_IDENTIFIER, set by the stack),
 * not the anonymous one, so an anonymous flood cannot throttle the inbox. The access rules themselves
 * are mocked here (they have their own tests); only the metering choice is the subject.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { Env } from '../lib/config/service';
import type { AccessDecision } from '../lib/keys/access-decision';
import { hashApiKey } from '../lib/keys/api-key';

const rateLimit = { limit: 600, remaining: 599, reset: 60, exceeded: false };
const staffDecision = (outcome: AccessDecision['outcome']): AccessDecision => ({
  outcome,
  reason: outcome,
  rateLimit,
  principal: { keyId: 'staff_0123456789ab', partnerId: 'clinic-staff', scopes: [], allowedSenderIds: [], staff: { subject: 's', username: 'u' } },
});
const partnerDecision: AccessDecision = {
  outcome: 'allow',
  reason: 'ok',
  rateLimit,
  principal: { keyId: 'key_1', partnerId: 'p1', scopes: [], allowedSenderIds: [] },
};
const anonymousDecision: AccessDecision = { outcome: 'unauthenticated', reason: 'no key', rateLimit };

const mocks = {
  staff: jest.fn(async (): Promise<AccessDecision> => staffDecision('allow')),
  partner: jest.fn(async (): Promise<AccessDecision> => partnerDecision),
  anonymousRoute: jest.fn(async (): Promise<AccessDecision> => anonymousDecision),
};
jest.mock('../lib/keys/access-wiring', () => ({ ...jest.requireActual('../lib/keys/access-wiring'), accessDependencies: () => ({}) }));
jest.mock('../lib/keys/access-decision', () => ({ ...jest.requireActual('../lib/keys/access-decision'), decideAccess: () => mocks.partner() }));
jest.mock('../lib/keys/staff-access', () => ({ decideStaffAccess: () => mocks.staff(), decideAnonymousRoute: () => mocks.anonymousRoute() }));
jest.mock('../lib/keys/staff-token', () => ({ staffTokenVerifierFromEnv: () => ({}) }));

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded after the mocks and the environment
const load = () => require('../functions/authorizer') as { handler: (e: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult> };

const ANON = 'interop-test-anonymous-usage-identifier-v1';
const STAFF = 'interop-test-staff-usage-identifier-v1';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzIn0.c2lnbmF0dXJl';

function event(headers: Record<string, string>, method = 'GET', resource = '/interopInbox/{packetId}'): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc/test/GET/interopInbox/p1',
    resource,
    path: resource,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    pathParameters: {},
    queryStringParameters: {},
    multiValueQueryStringParameters: {},
    stageVariables: {},
    requestContext: { identity: { sourceIp: '203.0.113.9' } } as never,
  };
}

describe('the usage plan the authorizer names', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    process.env[Env.anonUsageIdentifier] = ANON;
    process.env.STAFF_USAGE_IDENTIFIER = STAFF;
  });
  afterAll(() => {
    process.env = saved;
  });

  test.each(['allow', 'forbidden', 'rate_limited'] as const)('a verified staff ID token (%s): the staff plan, not the anonymous one', async (outcome) => {
    mocks.staff.mockResolvedValueOnce(staffDecision(outcome));
    const result = await load().handler(event({ authorization: `Bearer ${JWT}` }));
    expect(result.usageIdentifierKey).toBe(STAFF);
  });

  test('a bearer token that does not verify: the anonymous plan', async () => {
    mocks.staff.mockResolvedValueOnce({ outcome: 'unauthenticated', reason: 'invalid token', rateLimit });
    const result = await load().handler(event({ authorization: `Bearer ${JWT}` }));
    expect(result.usageIdentifierKey).toBe(ANON);
  });

  test('a partner key: the hash of the key (its tier plan), as before', async () => {
    const result = await load().handler(event({ 'x-api-key': 'demo-export-key' }));
    expect(result.usageIdentifierKey).toBe(hashApiKey('demo-export-key'));
  });

  test('no credential: the anonymous plan', async () => {
    mocks.partner.mockResolvedValueOnce(anonymousDecision);
    const result = await load().handler(event({}));
    expect(result.usageIdentifierKey).toBe(ANON);
  });

  test('without STAFF_USAGE_IDENTIFIER (the local stack) staff fall back to the anonymous identifier', async () => {
    delete process.env.STAFF_USAGE_IDENTIFIER;
    const result = await load().handler(event({ authorization: `Bearer ${JWT}` }));
    expect(result.usageIdentifierKey).toBe(ANON);
  });
});
