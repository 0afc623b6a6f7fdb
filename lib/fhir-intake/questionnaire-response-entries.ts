/**
 * FHIR intake of QuestionnaireResponses (POST /fhir/QuestionnaireResponse, and the responses of
 * POST /fhir): a completed form through the form intake of POST /receiveFormIntakeScope (matching,
 * inbox, 409 for a changed resubmission; docs/fhir.md "Intake").
 *
 *   prepare   the response mapped (questionnaire-mapping.ts), its body checked by the validator of
 *             POST /receiveFormIntakeScope, its form source checked against the partner, its size
 *   write     receiveFormPacket
 *
 * Only the functions whose route takes QuestionnaireResponses bundle this module (and so the form
 * intake).
 */
import { ConflictError, ContentTooLargeError, ForbiddenByPolicyError } from '../domain-errors';
import {
  MAX_PACKET_CONTENT_BYTES,
  formSourceAllowed,
  receiveFormPacket,
  validateIntakeBody,
  type FormIntakeDependencies,
  type IntakeResult,
} from '../forms/intake';
import { packetIdFor } from '../forms/packet-id';
import type { FormIntakeBody } from '../forms/types';
import { expressionOfFormPointer, formPacketFromResponse } from './questionnaire-mapping';
import { isObject, resolveReference, type FhirObject } from './references';
import { EntryRefusal, type EntryPlace, type EntryPreparer, type FhirIntakeInput, type PreparedEntry } from './receive-fhir';

/** The preparer of QuestionnaireResponse entries. */
export function questionnaireResponseEntries(deps: FormIntakeDependencies): EntryPreparer {
  return async (resource, place, input) => prepareQuestionnaireResponse(resource, place, input, deps);
}

function prepareQuestionnaireResponse(resource: FhirObject, place: EntryPlace, input: FhirIntakeInput, deps: FormIntakeDependencies): PreparedEntry {
  const { path, bundle } = place;
  const mapped = formPacketFromResponse(resource, { bundle, path });
  if (!mapped.ok) throw new EntryRefusal(400, mapped.issues);
  const subject = isObject(resource.subject) && typeof resource.subject.reference === 'string' ? resource.subject.reference : '';
  const resolved = resolveReference(subject, resource, bundle);
  const patientPath = resolved.kind === 'entry' ? `Bundle.entry[${resolved.index}].resource` : `${path}.contained[0]`;
  const validation = validateIntakeBody(mapped.body, input.now);
  if (!validation.ok)
    throw new EntryRefusal(
      400,
      validation.errors.map((fieldError) => ({
        expression: expressionOfFormPointer('pointer' in fieldError ? fieldError.pointer : '', path, patientPath),
        message: fieldError.message,
      })),
    );
  const payload = validation.body.payload;
  if (!formSourceAllowed(input.principal, payload.sourceSystemId))
    throw new EntryRefusal(403, [
      { expression: `${path}.meta.source`, message: "this API key's partner does not own this form source (meta.source or identifier.system)" },
    ]);
  const content = JSON.stringify({ formName: payload.formName, patient: payload.patient, answers: payload.answers });
  if (Buffer.byteLength(content, 'utf8') > MAX_PACKET_CONTENT_BYTES)
    throw new EntryRefusal(413, [{ expression: `${path}.item`, message: `the answers and the patient exceed ${MAX_PACKET_CONTENT_BYTES} bytes` }]);
  const body = validation.body;
  return {
    refusalBeforeWrite: () => refusalBeforeWrite(body, path, input, deps),
    write: () => writeQuestionnaireResponse(body, path, input, deps),
  };
}

/** A submission id used before with other content, found without writing (the replay path of the form intake writes nothing). */
async function refusalBeforeWrite(body: FormIntakeBody, path: string, input: FhirIntakeInput, deps: FormIntakeDependencies): Promise<EntryRefusal | undefined> {
  const packetId = packetIdFor(input.principal.partnerId, body.payload.sourceSystemId, body.payload.submissionId);
  if (!(await deps.store().getPacket(packetId, { withContent: false }))) return undefined;
  try {
    await receiveFormPacket(body, input.principal, input.now, deps);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    return new EntryRefusal(409, [{ expression: `${path}.identifier`, message: error.message }]);
  }
  return undefined;
}

async function writeQuestionnaireResponse(
  body: FormIntakeBody,
  path: string,
  input: FhirIntakeInput,
  deps: FormIntakeDependencies,
): Promise<{ ok: true; status: '201 Created' | '200 OK'; packetId: string; patientId?: string }> {
  let result: IntakeResult;
  try {
    result = await receiveFormPacket(body, input.principal, input.now, deps);
  } catch (error) {
    if (error instanceof ConflictError) throw new EntryRefusal(409, [{ expression: `${path}.identifier`, message: error.message }]);
    if (error instanceof ForbiddenByPolicyError) throw new EntryRefusal(403, [{ expression: `${path}.meta.source`, message: error.message }]);
    if (error instanceof ContentTooLargeError) throw new EntryRefusal(413, [{ expression: `${path}.item`, message: error.message }]);
    throw error;
  }
  return {
    ok: true,
    status: result.kind === 'created' ? '201 Created' : '200 OK',
    packetId: result.packet.packetId,
    ...(result.packet.patientId ? { patientId: result.packet.patientId } : {}),
  };
}
