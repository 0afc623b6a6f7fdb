/**
 * GET /exportHl7Note?patientId=&noteId=  (scope interop:export:hl7)
 * One note as HL7 v2.5.1 MDM^T02^MDM_T02 (MSH EVN PID PV1 TXA OBX), application/hl7-v2.
 * 400 missing/invalid parameter; 404 unknown patient or note, or a note of another patient;
 * 406 when Accept excludes HL7.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist.
 */
import { exportHl7NoteRoute } from '../lib/config/service';
import { httpEndpoint, hl7Response } from '../lib/http/endpoint';
import { requireHl7Acceptable } from '../lib/http/hl7-negotiation';
import { requireIdParameters } from '../lib/http/query';
import { exportNoteMessage } from '../lib/exports/chart-exports';
import { chartExportDependencies } from '../lib/exports/chart-export-wiring';
import { requirePatientReadable } from '../lib/http/patient-gate';

export const handler = httpEndpoint(exportHl7NoteRoute, async (request) => {
  const ids = requireIdParameters(request.event, ['patientId', 'noteId'] as const);
  requireHl7Acceptable(request.event);
  request.audit({ action: 'export.note', patientId: ids.patientId, resourceIds: { noteId: ids.noteId } });
  await requirePatientReadable(request, ids.patientId);
  return hl7Response(await exportNoteMessage(chartExportDependencies(), ids, request));
});
