/**
 * Lambda REQUEST authorizer in front of every endpoint. It has no identity source (so a request
 * without x-api-key still reaches it and gets the same problem+json 401 and anonymous rate limit).
 * It runs the service's one access rule (lib/keys/access-decision.ts) and hands the decision to
 * the endpoint in the authorizer context; the endpoint's pipeline answers 401/403/429 with the
 * problem+json body and rate-limit headers, so every refusal looks the same locally and in the cloud.
 * API Gateway's result caching is off (TTL 0): every request is counted by the rate limiter. The
 * container keeps the key and partner records it read for at most 10 s (ACCESS_RECORD_MAX_AGE_SECONDS,
 * lib/keys/access-records.ts), so a revocation, a block or any other key or partner change applies
 * to every request 10 s after it at the latest, and a steady stream of requests costs one DynamoDB
 * call each (the rate limiter's conditional UpdateItem).
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { endpointByRoute } from '../lib/config/service';
import { Env } from '../lib/config/service';
import { headerValues } from '../lib/http/headers';
import { decideAccess } from '../lib/keys/access-decision';
import { hashApiKey } from '../lib/keys/api-key';
import { encodeDecision } from '../lib/keys/authorizer-context';
import { STAFF_USAGE_IDENTIFIER_ENV, accessDependencies } from '../lib/keys/access-wiring';
import { decideAnonymousRoute, decideStaffAccess } from '../lib/keys/staff-access';
import { staffTokenVerifierFromEnv } from '../lib/keys/staff-token';
import { logger } from '../lib/observability/logger';

export const handler = async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  const started = Date.now();
  const route = endpointByRoute(event.httpMethod, event.resource);
  const apiKeys = headerValues({ headers: event.headers ?? {}, multiValueHeaders: event.multiValueHeaders ?? {} }, 'x-api-key');
  const sourceIp = event.requestContext?.identity?.sourceIp ?? 'unknown';
  const now = new Date();
  const deps = accessDependencies();
  // a request without x-api-key that carries `Authorization: Bearer <JWT>` is a signed-in staff member
  const bearer = apiKeys.some((k) => k.trim() !== '') ? undefined : staffBearerToken(event);
  const decision = route?.anonymous
    ? await decideAnonymousRoute({ sourceIp, now }, deps)
    : bearer !== undefined
      ? await decideStaffAccess({ bearerToken: bearer, sourceIp, requiredScope: route?.scope, now }, { ...deps, verifier: staffTokenVerifierFromEnv() })
      : await decideAccess({ apiKeys, sourceIp, requiredScope: route?.scope, now }, deps);
  logger.info('authorizer.decision', {
    route: route?.name,
    decision: decision.outcome,
    keyId: decision.principal?.keyId,
    partnerId: decision.principal?.partnerId,
    durationMs: Date.now() - started,
  });
  // API Gateway usage plans meter by an API Gateway key whose value is the SHA-256 of the
  // partner's secret (never the secret itself); staff authenticated by their ID token share the
  // staff plan; callers without a valid key or token share the anonymous plan
  const usageIdentifierKey =
    decision.principal?.staff && bearer !== undefined && !route?.anonymous
      ? (process.env[STAFF_USAGE_IDENTIFIER_ENV] ?? process.env[Env.anonUsageIdentifier])
      : decision.principal && !decision.principal.staff && !route?.anonymous && decision.outcome !== 'unauthenticated'
        ? hashApiKey(apiKeys.map((k) => k.trim()).find((k) => k !== '')!)
        : process.env[Env.anonUsageIdentifier];
  return {
    principalId: decision.principal?.keyId ?? 'anonymous',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
    },
    context: encodeDecision(decision),
    ...(usageIdentifierKey ? { usageIdentifierKey } : {}),
  };
};

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The JWT of a single `Authorization: Bearer` header; anything else is not a staff sign-in. */
function staffBearerToken(event: APIGatewayRequestAuthorizerEvent): string | undefined {
  const values = headerValues({ headers: event.headers ?? {}, multiValueHeaders: event.multiValueHeaders ?? {} }, 'authorization');
  if (values.length !== 1) return undefined;
  const match = /^Bearer +(\S+)$/i.exec(values[0]!.trim());
  return match && JWT_SHAPE.test(match[1]!) ? match[1] : undefined;
}
