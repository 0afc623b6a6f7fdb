/**
 * `npm run invoke -- FUNCTION EVENT_FILE`: run one handler against the running local stack, as a
 * tester would with a saved API Gateway event, and print the response.
 * For endpoint functions the event goes through the authorizer first, exactly as API Gateway does
 * (the event's `x-api-key` header decides); `authorizer` itself can be invoked directly too.
 */
import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { AuthorizerFunction, HttpEndpoints } from '../lib/config/service';
import { dispatch } from '../lib/local/api-gateway';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { loadHandler } from '../lib/local/function-registry';
import { lambdaContext } from '../lib/local/lambda-context';
import { explainTargetFailure } from '../lib/admin/target';

async function main([name, file]: string[]): Promise<number> {
  if (!name || !file) {
    process.stderr.write('usage: npm run invoke -- FUNCTION EVENT_FILE\n');
    return 2;
  }
  useLocalStackEnvironment();
  const event = JSON.parse(readFileSync(file, 'utf8')) as APIGatewayProxyEvent;
  const endpoint = HttpEndpoints.find((e) => e.name === name);
  let result: unknown;
  if (endpoint) {
    const query = new URLSearchParams();
    for (const [k, vs] of Object.entries(event.multiValueQueryStringParameters ?? {})) for (const v of vs ?? []) query.append(k, v);
    if (!event.multiValueQueryStringParameters) for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) if (v !== undefined) query.append(k, v);
    const headers: Array<[string, string]> = Object.entries(event.headers ?? {}).flatMap(([k, v]) => (v === undefined ? [] : [[k, v] as [string, string]]));
    const body = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : undefined;
    const path = endpoint.path.replace(/\{(\w+)\}/g, (_m, p: string) => encodeURIComponent(event.pathParameters?.[p] ?? ''));
    result = await dispatch({
      method: endpoint.method,
      url: `${path}${query.size ? `?${query}` : ''}`,
      headers,
      body,
      sourceIp: event.requestContext?.identity?.sourceIp ?? '127.0.0.1',
    });
  } else {
    const handler = await loadHandler(name);
    result = await handler(event, lambdaContext(name, name === AuthorizerFunction.name ? AuthorizerFunction.timeoutSeconds : 30), () => undefined);
  }
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  // a 5xx answer is a failed invocation: scripts and CI must see it
  const status = (result as { statusCode?: unknown } | undefined)?.statusCode;
  if (typeof status === 'number' && status >= 500) {
    process.stderr.write(`${name} answered ${status}\n`);
    return 1;
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`${explainTargetFailure(error, undefined) ?? error.message}\n`);
    process.exit(1);
  },
);
