/**
 * POST /receiveTestData: a partner submits a lab result; it is validated, stored encrypted as a
 * new version, and a notification is attempted.
 *
 *   scope     interop:ingest:results (endpoint list, lib/config/service.ts)
 *   body      application/json, <= 6 MB, schemas/lab-result.schema.json (+ lib/results/validation.ts)
 *   domain    receiveLabResult (lib/results/receive.ts)
 *   answer    200 { status: "success", message, requestId, resultId, version, current, duplicate,
 *             notification }: the same shape whether or not the patient id is known to the chart
 *             400 every failing field by JSON pointer; 403 sender not allowed for the partner;
 *             409 x-request-id reused with another body, or still in progress (Retry-After);
 *             413 / 415; 503 + Retry-After when DynamoDB, KMS or S3 is unavailable
 */
import { receiveTestDataRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { receiveLabResult } from '../lib/results/receive';
import { receiveDependencies } from '../lib/results/result-wiring';

export const handler = httpEndpoint(receiveTestDataRoute, async (request) => {
  const { value } = readJsonBody(request.event);
  const outcome = await receiveLabResult(
    { body: value, principal: request.principal, requestId: request.requestId, requestIdSupplied: request.requestIdSupplied, now: request.now },
    receiveDependencies(),
  );
  // the trail names the result, and the chart patient when the lab's patient id is one (a lab's own
  // ids for unknown patients stay out of plain storage: docs/lab-results.md)
  request.audit({
    action: outcome.body.duplicate ? 'results.store_duplicate' : 'results.store',
    ...(outcome.chartPatientId ? { patientId: outcome.chartPatientId } : {}),
    resourceIds: { resultId: outcome.body.resultId, version: outcome.body.version },
  });
  return jsonResponse(outcome.status, outcome.body, outcome.replayed ? { 'idempotent-replayed': 'true' } : undefined);
});
