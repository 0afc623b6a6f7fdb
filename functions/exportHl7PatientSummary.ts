/**
 * GET /exportHl7PatientSummary?patientId=&limit=&cursor=  (scope interop:export:hl7)
 * The patient's `limit` most recent records (encounters, notes, assessments, lab results), newest
 * first, in the partner's summary style: an HL7 v2.5.1 batch (FHS/BHS) of ADT^A08, MDM^T02 and ORU^R01
 * messages (default), or one ORU^R01^ORU_R01. limit: 1..200, default 20.
 * The summary never exceeds its byte budget (5,000,000 bytes): records beyond it are left out, oldest
 * first, the HL7 says so (SUMMARY_CUT group with an NTE) and so do the headers
 * `X-Summary-Truncated: true|false` and `X-Summary-Records: <included>/<available>`.
 * Paging: while older records remain (beyond `limit`, or cut by the budget) the header
 * `X-Summary-Next-Cursor` gives the `cursor` of the next page (the same request with `&cursor=`).
 * 200 the batch or message | 400 missing/invalid patientId, limit or cursor | 404 unknown patient
 * (RecordNotFoundError) | 406 when Accept excludes HL7 | 503 when DynamoDB or KMS is unavailable.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist.
 */
import { exportHl7PatientSummaryRoute } from '../lib/config/service';
import { HL7_CONTENT_TYPE, httpEndpoint } from '../lib/http/endpoint';
import { requireHl7Acceptable } from '../lib/http/hl7-negotiation';
import { optionalIntegerParameter, optionalSingleParameter, requireIdParameters } from '../lib/http/query';
import { SUMMARY_LIMIT, exportPatientSummary } from '../lib/exports/chart-exports';
import { summaryExportDependencies } from '../lib/exports/summary-export-wiring';
import { requirePatientReadable } from '../lib/http/patient-gate';

export const handler = httpEndpoint(exportHl7PatientSummaryRoute, async (request) => {
  const { patientId } = requireIdParameters(request.event, ['patientId'] as const);
  const limit = optionalIntegerParameter(request.event, 'limit', SUMMARY_LIMIT);
  const cursor = optionalSingleParameter(request.event, 'cursor');
  requireHl7Acceptable(request.event);
  request.audit({ action: 'export.patient_summary', patientId: patientId, resourceIds: { limit: String(limit) } });
  await requirePatientReadable(request, patientId);
  const summary = await exportPatientSummary(summaryExportDependencies(), { patientId, limit, cursor }, request);
  return {
    status: 200,
    contentType: HL7_CONTENT_TYPE,
    body: summary.text,
    headers: {
      'x-summary-truncated': String(summary.cut),
      'x-summary-records': `${summary.recordsIncluded}/${summary.recordsAvailable}`,
      ...(summary.nextCursor ? { 'x-summary-next-cursor': summary.nextCursor } : {}),
    },
  };
});
