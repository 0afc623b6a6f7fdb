/**
 * POST /receiveTestData: a partner submits a lab result; it is validated, stored encrypted as a
 * new version, and a notification is attempted.
 *
 *   scope     interop:ingest:results (endpoint list, lib/config/service.ts)
 *   body      application/json, <= 6 MB, schemas/lab-result.schema.json (+ lib/results/validation.ts)
 *   domain    receiveLabResult (lib/results/receive.ts)
 *   filing    patientID (a chart patient id or the chart's MRN) and data.patient name evidence: filed only
 *             into a chart patient the partner is related to whose demographics agree, else held for
 *             review (lib/results/lab-filing.ts; GET /interopInbox/held)
 *   answer    200 { status: "success", message, requestId, resultId, version, current, duplicate,
 *             notification }: the same status, shape and headers whether the result was filed or held,
 *             and whether or not the patient id is known to the chart
 *             400 every failing field by JSON pointer; 403 sender not allowed for the partner;
 *             409 x-request-id reused with another body, or still in progress (Retry-After);
 *             413 / 415; 503 + Retry-After when DynamoDB, KMS or S3 is unavailable
 */
import { receiveTestDataRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { receiveLabResult } from '../lib/results/receive';
import { jsonReceiveDependencies } from '../lib/results/receive-wiring';

export const handler = httpEndpoint(receiveTestDataRoute, async (request) => {
  const { value } = readJsonBody(request.event);
  const outcome = await receiveLabResult(
    { body: value, principal: request.principal, requestId: request.requestId, requestIdSupplied: request.requestIdSupplied, now: request.now },
    jsonReceiveDependencies(),
  );
  // the trail names the result, and the chart patient when it was filed into one (a held result's
  // patient id stays out of plain storage: docs/lab-results.md)
  request.audit({
    action: outcome.body.duplicate ? 'results.store_duplicate' : 'results.store',
    ...(outcome.chartPatientId ? { patientId: outcome.chartPatientId } : {}),
    resourceIds: { resultId: outcome.body.resultId, version: outcome.body.version },
  });
  return jsonResponse(outcome.status, outcome.body, outcome.replayed ? { 'idempotent-replayed': 'true' } : undefined);
});
