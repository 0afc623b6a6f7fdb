/**
 * GET /fhir/DocumentReference/{id}  (scope interop:export:fhir) — a note (type LOINC 11506-3, the text as a text/plain UTF-8 attachment, author, encounter).
 * The id is `<patient>..<record>` (lib/fhir/logical-id.ts): the record is read under that patient's
 * key, so another patient's record, an unknown record and an id of the wrong shape are the same 404.
 * 400 malformed id or unsupported parameter, 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 * A record of a patient the partner's patient access does not reach (docs/write-authority.md
 * "Relationships") is the same 404 as an unknown id, decided before any chart lookup.
 */
import { fhirDocumentReferenceReadRoute } from '../lib/config/service';
import { fhirEndpoint, fhirResponse, rejectFhirQueryParameters, requireFhirAcceptable, requireLogicalIdParameter } from '../lib/http/fhir';
import { fhirChartDependencies } from '../lib/exports/fhir-export-wiring';
import { readDocumentReference } from '../lib/exports/fhir-exports';
import { requireRecordPatientReadable } from '../lib/http/patient-gate';
import { recordIdsOf } from '../lib/fhir/logical-id';

export const handler = fhirEndpoint(fhirDocumentReferenceReadRoute, async (request) => {
  const id = requireLogicalIdParameter(request.event);
  rejectFhirQueryParameters(request.event);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.note.read' });
  await requireRecordPatientReadable(request, recordIdsOf(id)?.patientId, 'DocumentReference');
  const { patientId, recordId, resource } = await readDocumentReference(fhirChartDependencies(), id);
  request.audit({ action: 'fhir.note.read', patientId, resourceIds: { noteId: recordId } });
  return fhirResponse(resource);
});
