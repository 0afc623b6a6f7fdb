/**
 * Measurement 6: AWS cost per million requests per endpoint, from what the bench measured:
 * DynamoDB priced by capacity units, never by call count: write units measured per request by
 * bench/capacity-units.ts (ceil KB of the larger of the item before and after, every index entry
 * written or removed priced as its own write: a 3 KB PutItem whose item has a global index entry is
 * 6 WRU), read units as DynamoDB reports them (per 4 KB, eventually consistent = half); mean over a
 * few metered requests per endpoint. KMS and SQS by calls (their prices are per request), amortised
 * over the timed run. Billed duration (mean of per-request handler time rounded up to 1 ms, Lambda's
 * rule) and the configured memory (endpoint list). The authorizer runs once per request (result
 * caching off, TTL 0) and is billed as its own Lambda invocation (256 MB).
 *
 * Billed durations are measured against the LOCAL stack (in-process DynamoDB emulation, ~1 ms per
 * call); in AWS a DynamoDB call is typically a few ms, so the Lambda compute line is also shown
 * with an assumed per-call latency (AWS_CALL_MS_ASSUMED) added for every call on the path.
 */
import { AuthorizerFunction, HttpEndpoints } from '../lib/config/service';
import type { PathCalls } from './aws-calls';
import { round } from './stats';

export const PRICES = {
  region: 'us-east-1',
  asOf: '2024-11-01',
  asOfNote:
    'list prices as given in issue 7; DynamoDB on-demand rates are those in effect since the 2024-11-01 price reduction; Lambda, API Gateway, KMS, SQS unchanged since; not re-checked against the AWS price list during this run (no network)',
  lambdaArm64PerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  apiGatewayRestPerMillion: 3.5,
  dynamoDbPerMillionWru: 0.625,
  dynamoDbPerMillionRru: 0.125,
  kmsPer10kRequests: 0.03,
  sqsPerMillionRequests: 0.4,
  /** not in the issue's list; used only if an endpoint calls S3 on its path */
  s3PutPer1k: 0.005,
  s3GetPer1k: 0.0004,
  /** not in the issue's list; shown beside the total, not in it */
  cloudWatchLogsIngestPerGb: 0.5,
} as const;

/** Assumed latency of one AWS call from Lambda in-region, for the sensitivity column only. */
export const AWS_CALL_MS_ASSUMED = 5;

export interface CostInput {
  endpoint: string;
  path: string;
  traced: PathCalls;
  billedMs: { handler: number; authorizer: number };
  /** amortised calls per request from the timed run (service.operation -> calls per request) */
  callsPerRequest: Record<string, number>;
  logBytesPerRequest: number;
  /** mean local duration of one AWS call on this path, ms (for the sensitivity column) */
  localCallMs: number;
  /** DynamoDB capacity units per request (authorizer + endpoint), measured (bench/capacity-units.ts) */
  units: { rru: number; wru: number; wruIndex: number; requests: number };
}

/**
 * The lab submission's cost before issue 31: bench/RESULTS.md of commit 44b387a ("bench: RESULTS.md
 * after issue 14", `npm run bench` on this machine, 2026-11-25, code at 0ce6218), section 6,
 * receiveTestData "new result, no x-request-id" (the same request as today's line). Its DynamoDB
 * part (19 WRU, 3.5 RRU) came from the emulator's table units plus an estimate of index writes that
 * counted an index entry's removal as 1 WRU and missed index rewrites by updates of other attributes,
 * so by today's metering that figure was, if anything, low.
 */
export const LAB_SUBMISSION_COST_BEFORE_ISSUE_31 = {
  perMillion: 16.73,
  source: 'bench/RESULTS.md at commit 44b387a (npm run bench, 2026-11-25, code 0ce6218), receiveTestData "new result, no x-request-id"',
} as const;

export interface CostLine {
  endpoint: string;
  path: string;
  memoryMb: number;
  billedMs: { handler: number; authorizer: number };
  perRequest: { rru: number; wru: number; wruIndex: number; kms: number; sqs: number; s3Put: number; s3Get: number; dynamoCalls: number };
  /** requests metered for the capacity units */
  meteredRequests: number;
  perMillion: {
    apiGateway: number;
    lambdaRequests: number;
    lambdaCompute: number;
    authorizerCompute: number;
    dynamoDbReads: number;
    dynamoDbWrites: number;
    kms: number;
    sqs: number;
    s3: number;
    total: number;
  };
  /** total with every AWS call on the path taking AWS_CALL_MS_ASSUMED instead of the local time */
  totalWithAwsLatency: number;
  logsPerMillion: number;
}

export function costOf(input: CostInput): CostLine {
  const endpoint = HttpEndpoints.find((e) => e.name === input.endpoint)!;
  const both = input.traced.byPhase;
  const kms = Object.entries(input.callsPerRequest)
    .filter(([k]) => k.startsWith('kms.'))
    .reduce((s, [, v]) => s + v, 0);
  const sqs = Object.entries(input.callsPerRequest)
    .filter(([k]) => k.startsWith('sqs.'))
    .reduce((s, [, v]) => s + v, 0);
  const s3Put = input.callsPerRequest['s3.PutObject'] ?? 0;
  const s3Get = input.callsPerRequest['s3.GetObject'] ?? 0;
  const { rru, wru } = input.units;
  const gbs = (mb: number, ms: number) => (mb / 1024) * (ms / 1000);
  const compute = (mb: number, ms: number) => gbs(mb, ms) * PRICES.lambdaArm64PerGbSecond * 1e6;
  const perMillion = {
    apiGateway: PRICES.apiGatewayRestPerMillion,
    lambdaRequests: 2 * PRICES.lambdaPerMillionRequests,
    lambdaCompute: compute(endpoint.memoryMb, input.billedMs.handler),
    authorizerCompute: compute(AuthorizerFunction.memoryMb, input.billedMs.authorizer),
    dynamoDbReads: rru * PRICES.dynamoDbPerMillionRru,
    dynamoDbWrites: wru * PRICES.dynamoDbPerMillionWru,
    kms: kms * (PRICES.kmsPer10kRequests / 1e4) * 1e6,
    sqs: sqs * PRICES.sqsPerMillionRequests,
    s3: s3Put * PRICES.s3PutPer1k * 1000 + s3Get * PRICES.s3GetPer1k * 1000,
    total: 0,
  };
  perMillion.total = Object.entries(perMillion).reduce((s, [k, v]) => (k === 'total' ? s : s + v), 0);
  const extraMs = Math.max(0, AWS_CALL_MS_ASSUMED - input.localCallMs);
  const handlerCalls = both.handler.total;
  const authCalls = both.authorizer.total;
  const slowCompute =
    compute(endpoint.memoryMb, Math.ceil(input.billedMs.handler + handlerCalls * extraMs)) +
    compute(AuthorizerFunction.memoryMb, Math.ceil(input.billedMs.authorizer + authCalls * extraMs));
  const totalWithAwsLatency = perMillion.total - perMillion.lambdaCompute - perMillion.authorizerCompute + slowCompute;
  return {
    endpoint: input.endpoint,
    path: input.path,
    memoryMb: endpoint.memoryMb,
    billedMs: input.billedMs,
    perRequest: {
      rru: round(rru, 2),
      wru: round(wru, 2),
      wruIndex: round(input.units.wruIndex, 2),
      kms: round(kms, 4),
      sqs: round(sqs, 4),
      s3Put,
      s3Get,
      dynamoCalls: both.authorizer.dynamodb + both.handler.dynamodb,
    },
    meteredRequests: input.units.requests,
    perMillion: Object.fromEntries(Object.entries(perMillion).map(([k, v]) => [k, round(v, 4)])) as CostLine['perMillion'],
    totalWithAwsLatency: round(totalWithAwsLatency, 4),
    logsPerMillion: round(((input.logBytesPerRequest * 1e6) / 1024 ** 3) * PRICES.cloudWatchLogsIngestPerGb, 4),
  };
}
