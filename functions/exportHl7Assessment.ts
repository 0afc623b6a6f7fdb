/**
 * GET /exportHl7Assessment?patientId=&assessmentId=  (scope interop:export:hl7)
 * One assessment as HL7 v2.5.1 ORU^R01^ORU_R01: one OBX per item (NM/ST/TX/CWE), total and
 * interpretation when present, OBX-11 F.
 * 200 the message | 400 missing/invalid parameter | 404 unknown patient or assessment, or one of
 * another patient (RecordNotFoundError) | 406 when Accept excludes HL7.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist.
 */
import { exportHl7AssessmentRoute } from '../lib/config/service';
import { httpEndpoint, hl7Response } from '../lib/http/endpoint';
import { requireHl7Acceptable } from '../lib/http/hl7-negotiation';
import { requireIdParameters } from '../lib/http/query';
import { exportAssessmentMessage } from '../lib/exports/chart-exports';
import { chartExportDependencies } from '../lib/exports/chart-export-wiring';
import { requirePatientReadable } from '../lib/http/patient-gate';

export const handler = httpEndpoint(exportHl7AssessmentRoute, async (request) => {
  const ids = requireIdParameters(request.event, ['patientId', 'assessmentId'] as const);
  requireHl7Acceptable(request.event);
  request.audit({ action: 'export.assessment', patientId: ids.patientId, resourceIds: { assessmentId: ids.assessmentId } });
  await requirePatientReadable(request, ids.patientId);
  return hl7Response(await exportAssessmentMessage(chartExportDependencies(), ids, request));
});
