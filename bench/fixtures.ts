/**
 * Requests the bench sends: API Gateway events built exactly as lib/local/api-gateway.ts builds
 * them, request bodies (lab result, form packet), the bench API keys (high rate limit) and the
 * demo ids of lib/local/demo-chart.json.
 */
import { randomUUID } from 'node:crypto';
import { authorizerEventFor } from '../lib/local/api-gateway';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { Scopes, type HttpEndpoint, type Scope } from '../lib/config/service';
import { hashApiKey, keyIdFromHash } from '../lib/keys/api-key';
import type { ApiKeyStore } from '../lib/keys/api-key-store';
import { effectiveScopes } from '../lib/keys/access-decision';
import { encodeDecision } from '../lib/keys/authorizer-context';
import { DEMO_PARTNERS } from '../lib/local/demo-keys';

export const BENCH_RATE_LIMIT = 1_000_000;

export interface BenchKey {
  secret: string;
  partnerId: string;
  scopes: Scope[];
}

/** Bench keys: the demo partners, a limit no run reaches (the bench measures, it must not be throttled). */
export const BENCH_KEYS = {
  export: { secret: 'bench-export-key', partnerId: 'demo-ehr', scopes: [Scopes.exportHl7] },
  results: { secret: 'bench-results-key', partnerId: 'demo-lab', scopes: [Scopes.ingestResults] },
  forms: { secret: 'bench-forms-key', partnerId: 'demo-forms', scopes: [Scopes.ingestForms] },
  inbox: { secret: 'bench-inbox-key', partnerId: 'demo-staff', scopes: [Scopes.inboxReview] },
  fhir: { secret: 'bench-fhir-key', partnerId: 'demo-ehr', scopes: [Scopes.exportFhir] },
  hl7: { secret: 'bench-hl7-key', partnerId: 'demo-lab', scopes: [Scopes.ingestHl7] },
  fhirIngest: { secret: 'bench-fhir-ingest-key', partnerId: 'demo-lab', scopes: [Scopes.ingestFhir] },
} satisfies Record<string, BenchKey>;

export async function createBenchKeys(store: ApiKeyStore, now: Date): Promise<void> {
  for (const key of Object.values(BENCH_KEYS)) {
    const keyHash = hashApiKey(key.secret);
    await store.putKey({
      keyHash,
      keyId: keyIdFromHash(keyHash),
      partnerId: key.partnerId,
      label: key.secret,
      scopes: key.scopes,
      status: 'active',
      rateLimit: BENCH_RATE_LIMIT,
      // an hour: 278/s, split over 6 counter shards (lib/keys/rate-limiter.ts), each visited during
      // the warm-up, so traced requests show the steady state (a 60 s window would make 64 shards)
      rateWindowSeconds: 3600,
      createdAt: now.toISOString(),
    });
  }
}

export const DEMO = {
  patientId: 'demo-patient-1',
  noteId: 'demo-note-1',
  encounterId: 'demo-encounter-1',
  assessmentId: 'demo-assessment-1',
} as const;

/** A lab result submission (schemas/lab-result.schema.json), unique per `n`. */
export function labResultBody(n: number | string, options: { resultCount?: number } = {}): Record<string, unknown> {
  const results = Array.from(
    { length: options.resultCount ?? 3 },
    (_, i) =>
      [
        { testName: 'Hemoglobin A1c', result: '7.2', units: '%', referenceRange: '4.0-5.6' },
        { testName: 'Glucose, fasting', result: '98', units: 'mg/dL', referenceRange: '70-99' },
        { testName: 'Comment', result: 'Specimen slightly hemolyzed; repeat if clinically indicated.', units: '' },
      ][i % 3]!,
  );
  return {
    data: {
      senderID: 'demo-lab',
      patientID: DEMO.patientId,
      accessionNumber: `BENCH-${n}`,
      recordNo: 'R-1001',
      status: 'final',
      ResultedDateUTC: '2024-03-01T09:30:00Z',
      results,
      // a small attachment, kept inline (reports over 16 KiB go to S3): as in events/receiveTestData.json
      reports: [
        { source: 'base64', type: 'application/pdf', name: 'report.pdf', data: 'JVBERi0xLjQKJSBTeW50aGV0aWMgZGVtbyByZXBvcnQsIG5vIHJlYWwgcGF0aWVudAolJUVPRgo=' },
      ],
    },
  };
}

/** A form packet for a known patient (routed at intake; answered 202 like every packet), unique per `n`. */
export function formPacketBody(n: number | string): Record<string, unknown> {
  return {
    payload: {
      sourceSystemId: 'demo-forms',
      formId: 'intake-v2',
      formName: 'New patient intake',
      submissionId: `bench-${n}`,
      patientId: DEMO.patientId,
      patient: { externalPatientId: 'ext-1001', firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12', email: 'alex.sample@example.com' },
      answers: { reasonForVisit: 'Follow-up', allergies: ['penicillin'], smoker: false, painScore: 3 },
    },
  };
}

export interface RequestSpec {
  query?: Record<string, string>;
  pathParameters?: Record<string, string>;
  body?: string;
  headers?: Record<string, string>;
}

function pathOf(endpoint: HttpEndpoint, pathParameters: Record<string, string> | undefined): string {
  return endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(pathParameters?.[name] ?? ''));
}

export function urlOf(endpoint: HttpEndpoint, spec: RequestSpec): string {
  const qs = spec.query ? '?' + new URLSearchParams(spec.query).toString() : '';
  return pathOf(endpoint, spec.pathParameters) + qs;
}

/** The v1 proxy event the local gateway (and API Gateway) hands the endpoint, without authorizer context. */
export function proxyEvent(endpoint: HttpEndpoint, spec: RequestSpec, apiKey: string): APIGatewayProxyEvent {
  const headers: Record<string, string> = {
    'x-api-key': apiKey,
    ...(spec.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(spec.headers ?? {}),
  };
  const multiValueHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]]));
  const query = spec.query ?? {};
  const path = pathOf(endpoint, spec.pathParameters);
  return {
    resource: endpoint.path,
    path,
    httpMethod: endpoint.method,
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length ? { ...query } : null,
    multiValueQueryStringParameters: Object.keys(query).length ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])) : null,
    pathParameters: spec.pathParameters ?? null,
    stageVariables: null,
    body: spec.body ?? null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: endpoint.method,
      identity: { sourceIp: '127.0.0.1', userAgent: 'bench' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/local${path}`,
      stage: 'local',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: endpoint.name,
      resourcePath: endpoint.path,
    },
  };
}

/** The REQUEST authorizer event for the same request: the gateway emulation's own builder. */
export const authorizerEvent = authorizerEventFor;

/** An authorizer context that allows the request (for invocations without a running authorizer). */
/**
 * The authorizer context the real authorizer would hand the endpoint for a bench key: the key's
 * scopes with what they imply (lib/keys/access-decision.ts effectiveScopes) and its demo partner's
 * record (lib/local/demo-keys.ts: senders, form sources, assigning authorities, receiver, profile).
 */
export function allowContext(key: BenchKey) {
  const keyId = keyIdFromHash(hashApiKey(key.secret));
  const partner = DEMO_PARTNERS.find((p) => p.partnerId === key.partnerId);
  return encodeDecision({
    outcome: 'allow',
    reason: 'ok',
    principal: {
      keyId,
      partnerId: key.partnerId,
      scopes: effectiveScopes(key.scopes),
      allowedSenderIds: partner?.allowedSenderIds ?? [],
      ...(partner?.allowedFormSourceIds ? { allowedFormSourceIds: partner.allowedFormSourceIds } : {}),
      ...(partner?.assigningAuthorities ? { assigningAuthorities: partner.assigningAuthorities } : {}),
      ...(partner?.receivingApplication ? { receivingApplication: partner.receivingApplication } : {}),
      ...(partner?.receivingFacility ? { receivingFacility: partner.receivingFacility } : {}),
      ...(partner?.hl7Profile ? { hl7Profile: partner.hl7Profile } : {}),
    },
    rateLimit: { limit: BENCH_RATE_LIMIT, remaining: BENCH_RATE_LIMIT - 1, reset: Math.floor(Date.now() / 1000) + 60, exceeded: false },
  });
}
