/**
 * GET /exportHl7PatientAdt?patientId=  (scope interop:export:hl7)
 * The patient's demographics as HL7 v2.5.1 ADT^A08^ADT_A01 (update patient information).
 * 200 the message | 400 missing/invalid patientId | 404 unknown patient (RecordNotFoundError) |
 * 406 when Accept excludes HL7.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist.
 */
import { exportHl7PatientAdtRoute } from '../lib/config/service';
import { httpEndpoint, hl7Response } from '../lib/http/endpoint';
import { requireHl7Acceptable } from '../lib/http/hl7-negotiation';
import { requireIdParameters } from '../lib/http/query';
import { exportPatientAdtMessage } from '../lib/exports/chart-exports';
import { chartExportDependencies } from '../lib/exports/chart-export-wiring';
import { requirePatientReadable } from '../lib/http/patient-gate';

export const handler = httpEndpoint(exportHl7PatientAdtRoute, async (request) => {
  const ids = requireIdParameters(request.event, ['patientId'] as const);
  requireHl7Acceptable(request.event);
  request.audit({ action: 'export.patient_adt', patientId: ids.patientId });
  await requirePatientReadable(request, ids.patientId);
  return hl7Response(await exportPatientAdtMessage(chartExportDependencies(), ids, request));
});
