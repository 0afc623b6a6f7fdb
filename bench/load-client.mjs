// Load generator for measurement 5, run as its own Node process (so it does not share the event
// loop of the local stack it measures). A bounded closed loop: `concurrency` workers, each sends
// its next request when the previous answer is complete, over keep-alive connections, for
// `durationMs` after a `warmupMs` that is not counted.
//
//   node load-client.mjs '<json options>'
//   options: { url, method, headers, body?, uniqueToken?, concurrency, durationMs, warmupMs }
//   `uniqueToken`: every occurrence in `body` is replaced by a fresh value per request.
//
// Prints one line: LOAD_RESULT {"requests":..,"durationMs":..,"latenciesMs":[..],"statuses":{..},"errors":..,"warmupRequests":..}
import http from 'node:http';

const options = JSON.parse(process.argv[2]);
const url = new URL(options.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency, maxFreeSockets: options.concurrency });
const tag = `${process.pid.toString(36)}${Date.now().toString(36)}`;
let sequence = 0;

function send() {
  return new Promise((resolve) => {
    const body =
      options.body === undefined ? undefined : options.uniqueToken ? options.body.split(options.uniqueToken).join(`${tag}-${++sequence}`) : options.body;
    const headers = { ...options.headers, ...(body !== undefined ? { 'content-length': Buffer.byteLength(body) } : {}) };
    const started = process.hrtime.bigint();
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: options.method, headers, agent }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    req.on('error', (error) => resolve({ status: 0, ms: Number(process.hrtime.bigint() - started) / 1e6, error: error.code ?? error.message }));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

async function phase(ms, record) {
  const end = Date.now() + ms;
  const latencies = [];
  const statuses = {};
  let errors = 0;
  let count = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (Date.now() < end) {
      const r = await send();
      count++;
      if (!record) continue;
      latencies.push(r.ms);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.error) errors++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { requests: count, durationMs: Number(process.hrtime.bigint() - started) / 1e6, latenciesMs: latencies, statuses, errors };
}

const warmup = await phase(options.warmupMs, false);
const result = { ...(await phase(options.durationMs, true)), warmupRequests: warmup.requests };
agent.destroy();
process.stdout.write(`LOAD_RESULT ${JSON.stringify(result)}\n`);
