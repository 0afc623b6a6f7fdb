/**
 * GET /exportHl7PatientSummary?patientId=&limit=  (scope interop:export:hl7)
 * The patient's `limit` most recent records (encounters, notes, assessments, lab results), newest
 * first, as one HL7 v2.5.1 ORU^R01^ORU_R01 with an order group per record. limit: 1..200, default 20.
 */
import { httpEndpoint, hl7Response } from '../lib/http/endpoint';
import { requireHl7Acceptable } from '../lib/http/hl7-negotiation';
import { optionalIntegerParameter, requireIdParameters } from '../lib/http/query';
import { SUMMARY_LIMIT, exportPatientSummaryMessage } from '../lib/exports/chart-exports';
import { summaryExportDependencies } from '../lib/exports/summary-dependencies';

export const handler = httpEndpoint('exportHl7PatientSummary', async (request) => {
  const { patientId } = requireIdParameters(request.event, ['patientId'] as const);
  const limit = optionalIntegerParameter(request.event, 'limit', SUMMARY_LIMIT);
  requireHl7Acceptable(request.event);
  request.audit({ action: 'export.patient_summary', patientId: patientId, resourceIds: { limit: String(limit) } });
  return hl7Response(await exportPatientSummaryMessage(summaryExportDependencies(), { patientId, limit }, request));
});
