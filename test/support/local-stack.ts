import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack';
import { checkContract } from './contract';

/** The local stack on free loopback ports, in memory, with demo data. */
export async function startTestStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  return startLocalStack({
    ports: { api: 0, dynamodb: 0, sqs: 0, kms: 0, staffSignIn: 0 },
    prefix: 'interop-test',
    backgroundWorkers: false,
    staffSignIn: false,
    ...options,
  });
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export async function call(
  stack: LocalStack,
  method: string,
  pathAndQuery: string,
  init: { headers?: Record<string, string>; body?: string | Uint8Array } = {},
): Promise<HttpResult> {
  const response = await fetch(stack.urls.api + pathAndQuery, {
    method,
    headers: init.headers,
    body: typeof init.body === 'string' || init.body === undefined ? init.body : new Blob([new Uint8Array(init.body)]),
  });
  const text = await response.text();
  checkContract({ method, url: pathAndQuery }, { status: response.status, headers: response.headers, body: text });
  return { status: response.status, headers: response.headers, text, json: <T>() => JSON.parse(text) as T };
}
