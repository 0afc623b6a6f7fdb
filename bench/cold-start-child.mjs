// One fresh Node process = one cold start. Imports a Lambda bundle, invokes its handler once with
// the given event and stops at the first outgoing HTTP request (= the first AWS SDK call, after
// the handler has built its SDK clients, resolved credentials and endpoint, serialised and signed
// the request). No network is used: the process exits inside the http.client.request.start
// diagnostics channel, before any socket is opened.
//
//   node cold-start-child.mjs <bundle.mjs> <event.json>
//
// Prints one line: BENCH_RESULT {"importMs":..,"firstCallMs":..,"invokeMs":..,"responseMs":..,"bootMs":..,"reason":..}
//   importMs     module evaluation of the bundle (import())
//   firstCallMs  from before import() to the first SDK HTTP request (null when there was none)
//   invokeMs     from the end of import() to the first SDK HTTP request (null when there was none)
//   responseMs   from before import() to the handler's returned response, for an invocation that
//                finished without any SDK call (null otherwise: the process stops at the request)
//   bootMs       Node start-up before this script ran (performance.now() at entry)
import { performance } from 'node:perf_hooks';
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const bootMs = performance.now();
const [bundle, eventFile] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
let imported;
let reported = false;

function report(reason, extra = {}) {
  if (reported) return;
  reported = true;
  const now = performance.now();
  const out = {
    importMs: (imported ?? now) - start,
    firstCallMs: reason === 'sdk-call' ? now - start : null,
    invokeMs: reason === 'sdk-call' && imported !== undefined ? now - imported : null,
    responseMs: reason === 'returned-without-sdk-call' ? now - start : null,
    bootMs,
    reason,
    ...extra,
  };
  // stdout to a pipe is synchronous on Linux: the line is out before exit
  process.stdout.write(`\nBENCH_RESULT ${JSON.stringify(out)}\n`);
  process.exit(0);
}

diagnostics.subscribe('http.client.request.start', ({ request }) =>
  report('sdk-call', { target: request.getHeader('x-amz-target') ?? `${request.method} ${request.path}` }),
);

const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:bench',
  memoryLimitInMB: '512',
  awsRequestId: '00000000-0000-4000-8000-000000000000',
  logGroupName: '/aws/lambda/bench',
  logStreamName: 'bench',
  getRemainingTimeInMillis: () => 10_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

const start = performance.now();
const mod = await import(pathToFileURL(bundle).href);
imported = performance.now();
try {
  const result = await mod.handler(event, context, () => undefined);
  report('returned-without-sdk-call', { status: result?.statusCode });
} catch (error) {
  report('threw-without-sdk-call', { error: error?.name });
}
