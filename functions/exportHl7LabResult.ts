/**
 * GET /exportHl7LabResult?resultId=  (scope interop:export:hl7, or interop:read:own-results)
 * The current version of one lab result as HL7 v2.5.1 ORU^R01^ORU_R01 (MSH PID OBR OBX...),
 * application/hl7-v2: PID from the chart when the result's patient is matched (else the lab's
 * patient id), OBR/OBX from the result, each report as an OBX (ED for base64, TX for text).
 * A subscriber of `lab-result.saved` reads the result named in the event here, with its own key.
 * The message never exceeds its byte budget (5,000,000 bytes, like the summary): reports beyond it are
 * left out, the HL7 says so (an NTE after the OBR) and so do the headers `X-Export-Truncated: true|false`
 * and `X-Export-Reports: <included>/<available>`.
 * 400 missing/invalid resultId; 404 unknown result; 406 when Accept excludes HL7.
 * Own results (this partner sent them) are always readable; another partner's need the export scope
 * and a chart patient the caller's patient access reaches, else the same 404 as an unknown id.
 */
import { exportHl7LabResultRoute } from '../lib/config/service';
import { HL7_CONTENT_TYPE, httpEndpoint } from '../lib/http/endpoint';
import { requireHl7Acceptable } from '../lib/http/hl7-negotiation';
import { requireIdParameters } from '../lib/http/query';
import { labResultExportDependencies } from '../lib/exports/lab-result-export-wiring';
import { exportLabResultMessage } from '../lib/exports/lab-result-export';

export const handler = httpEndpoint(exportHl7LabResultRoute, async (request) => {
  const ids = requireIdParameters(request.event, ['resultId'] as const);
  requireHl7Acceptable(request.event);
  request.audit({ action: 'export.lab-result', resourceIds: { resultId: ids.resultId } });
  const exported = await exportLabResultMessage(labResultExportDependencies(), ids, request);
  request.audit({ action: 'export.lab-result', ...(exported.patientId ? { patientId: exported.patientId } : {}), resourceIds: { resultId: ids.resultId } });
  return {
    status: 200,
    contentType: HL7_CONTENT_TYPE,
    body: exported.message,
    headers: {
      'x-export-truncated': String(exported.cut),
      'x-export-reports': `${exported.reportsIncluded}/${exported.reportsAvailable}`,
    },
  };
});
