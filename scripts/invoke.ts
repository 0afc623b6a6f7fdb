/**
 * `npm run invoke -- FUNCTION EVENT_FILE`: run one handler against the running local stack, as a
 * tester would with a saved API Gateway event, and print the response.
 * For endpoint functions the event goes through the authorizer first, exactly as API Gateway does
 * (the event's `x-api-key` header decides); `authorizer` itself can be invoked directly too.
 */
import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints } from '../lib/config/service';
import { dispatch } from '../lib/local/api-gateway';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { loadHandler } from '../lib/local/function-registry';
import { lambdaContext } from '../lib/local/lambda-context';
import { AdminError } from '../lib/admin/key-admin';
import { UsageError, type CommandSpec } from '../lib/admin/cli-options';
import { readSingleCommand, runCli, runMain, type CliIo } from '../lib/admin/cli-runner';

const INVOKE_COMMAND: CommandSpec = {
  name: '',
  args: 'FUNCTION EVENT_FILE',
  summary:
    'Runs one handler against the running local stack with a saved API Gateway event and prints the response (exit 1 when it answers 5xx). Endpoint functions go through the authorizer first, as API Gateway does.',
  options: {
    set: {
      type: 'string',
      value: 'NAME=VALUE',
      multiple: true,
      description: "an endpoint event's path parameter NAME (when the path has {NAME}), else its query parameter NAME, set to VALUE: an id made at run time",
    },
  },
  examples: [
    'npm run invoke -- exportHl7Note events/exportHl7Note.json',
    'npm run invoke -- authorizer events/authorizer.json',
    'npm run invoke -- exportHl7LabResult events/exportHl7LabResult.json --set resultId=lr_…',
  ],
};

/** `--set NAME=VALUE` options, checked before anything is read. */
function settings(raw: string[] | undefined): Array<[string, string]> {
  return (raw ?? []).map((option) => {
    const at = option.indexOf('=');
    if (at < 1) throw new UsageError(`--set takes NAME=VALUE, got "${option}"`);
    return [option.slice(0, at), option.slice(at + 1)];
  });
}

function readEvent(file: string): APIGatewayProxyEvent {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new AdminError(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text) as APIGatewayProxyEvent;
  } catch {
    throw new AdminError(`${file}: not valid JSON`);
  }
}

export function main(argv: string[], io: CliIo): Promise<number> {
  return runCli('invoke', io, async () => {
    const read = readSingleCommand('invoke', INVOKE_COMMAND, argv, io);
    if ('exitCode' in read) return read.exitCode;
    if (read.positionals.length !== 2) throw new UsageError('give a FUNCTION and an EVENT_FILE');
    return invoke(read.positionals[0]!, read.positionals[1]!, settings(read.values.set as string[] | undefined), io);
  });
}

async function invoke(name: string, file: string, set: Array<[string, string]>, io: CliIo): Promise<number> {
  // what the command line says is checked before the stack is looked for
  const known = [AuthorizerFunction.name, ...HttpEndpoints.map((e) => e.name), ...BackgroundFunctions.map((f) => f.name)];
  if (!known.includes(name)) throw new UsageError(`unknown function "${name}" (a name of lib/config/service.ts, e.g. exportHl7Summary)`);
  const endpoint = HttpEndpoints.find((e) => e.name === name);
  if (set.length && !endpoint) throw new UsageError(`--set applies to an endpoint's event; ${name} is not an endpoint`);
  const event = readEvent(file);
  for (const [parameter, value] of set) {
    if (endpoint!.path.includes(`{${parameter}}`)) event.pathParameters = { ...event.pathParameters, [parameter]: value };
    else {
      event.queryStringParameters = { ...event.queryStringParameters, [parameter]: value };
      if (event.multiValueQueryStringParameters) event.multiValueQueryStringParameters = { ...event.multiValueQueryStringParameters, [parameter]: [value] };
    }
  }
  useLocalStackEnvironment();
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
  io.out(JSON.stringify(result, null, 2) + '\n');
  // a 5xx answer is a failed invocation: scripts and CI must see it
  const status = (result as { statusCode?: unknown } | undefined)?.statusCode;
  if (typeof status === 'number' && status >= 500) {
    io.err(`${name} answered ${status}\n`);
    return 1;
  }
  return 0;
}

if (require.main === module) runMain('invoke', main);
