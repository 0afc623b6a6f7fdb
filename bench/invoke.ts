/**
 * One request through the authorizer and the endpoint handler, in process, exactly as
 * lib/local/api-gateway.ts dispatch() runs it (same handler instances from
 * lib/local/function-registry.ts, same Lambda context helper), but with the two functions timed
 * separately: the authorizer and the endpoint are two Lambda invocations, billed separately.
 * The bench cross-checks this against the real dispatch() (see warm-latency.ts).
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyResult } from 'aws-lambda';
import { AuthorizerFunction } from '../lib/config/service';
import { loadHandler } from '../lib/local/function-registry';
import { lambdaContext } from '../lib/local/lambda-context';
import type { CallRecorder } from './aws-calls';
import { authorizerEvent, proxyEvent, type RequestSpec } from './fixtures';
import type { Scenario } from './scenarios';

export interface Invocation {
  status: number;
  body: string;
  headers: Record<string, string>;
  authorizerMs: number;
  handlerMs: number;
  totalMs: number;
}

const ns = () => process.hrtime.bigint();
const ms = (a: bigint, b: bigint) => Number(b - a) / 1e6;

export async function invoke(scenario: Scenario, spec: RequestSpec, recorder: CallRecorder): Promise<Invocation> {
  const event = proxyEvent(scenario.endpoint, spec, scenario.key.secret);
  const authEvent = authorizerEvent(event);
  const authorizer = await loadHandler(AuthorizerFunction.name);
  const handler = await loadHandler(scenario.endpoint.name);
  const authContext = lambdaContext(AuthorizerFunction.name, AuthorizerFunction.timeoutSeconds);
  const context = lambdaContext(scenario.endpoint.name, scenario.endpoint.timeoutSeconds);

  const t0 = ns();
  const authorization = (await recorder.inPhase('authorizer', async () => authorizer(authEvent, authContext, () => undefined))) as APIGatewayAuthorizerResult;
  const t1 = ns();
  if (!authorization.policyDocument.Statement.some((s) => s.Effect === 'Allow')) {
    return { status: 403, body: 'authorizer denied', headers: {}, authorizerMs: ms(t0, t1), handlerMs: 0, totalMs: ms(t0, t1) };
  }
  event.requestContext.authorizer = { ...(authorization.context ?? {}), principalId: authorization.principalId };
  const t2 = ns();
  const result = (await recorder.inPhase('handler', async () => handler(event, context, () => undefined))) as APIGatewayProxyResult;
  const t3 = ns();
  return {
    status: result.statusCode,
    body: result.body,
    headers: (result.headers ?? {}) as Record<string, string>,
    authorizerMs: ms(t0, t1),
    handlerMs: ms(t2, t3),
    totalMs: ms(t0, t3),
  };
}
