/**
 * A FHIR R4 QuestionnaireResponse (SDC) -> the form packet body of POST /receiveFormIntakeScope
 * (`{ payload: ... }`, schemas/form-packet.schema.json), so it runs the same intake (matching, inbox,
 * 409 for a changed resubmission):
 *
 *   sourceSystemId   meta.source, else identifier.system; a form source the partner does not own is
 *                    refused as for JSON (403, the same answer whether or not another partner owns it)
 *   formId           questionnaire (the canonical URL, `|version` kept)
 *   submissionId     identifier.value (required: it is what makes a resend the same submission)
 *   formName         the questionnaire's display (`_questionnaire` extension display), when sent
 *   patient          subject -> a Patient (contained, or a Bundle entry): name[0].family -> lastName,
 *                    given[0] -> firstName, birthDate -> dob, telecom email -> email,
 *                    identifier[0].value -> externalPatientId. `Patient/<chart id>` names the chart
 *                    patient (patientId) and still needs the Patient's demographics (the form intake
 *                    checks them against the chart); a subject by identifier only is refused.
 *   answers          every item with answers, keyed by linkId (nested items `parent.child`); one
 *                    answer -> its value, several -> a list. valueBoolean -> boolean, valueDecimal /
 *                    valueInteger -> number, valueDate / valueDateTime / valueTime / valueString /
 *                    valueUri -> string, valueCoding -> its code (`system|code` when the system is
 *                    sent), valueQuantity -> `<value> <unit>`, valueReference -> the reference,
 *                    valueAttachment -> its URL or title
 *
 * Pure; problems are returned with their FHIRPath.
 */
import { isObject, resolveReference, type BundleIndex, type FhirObject } from './references';
import type { StructureIssue } from './structure';

export type FormMappingResult = { ok: true; body: { payload: Record<string, unknown> } } | { ok: false; issues: StructureIssue[] };

const str = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

type Answer = string | number | boolean | null;

function answerValue(answer: FhirObject): Answer | undefined {
  if (typeof answer.valueBoolean === 'boolean') return answer.valueBoolean;
  if (typeof answer.valueDecimal === 'number') return answer.valueDecimal;
  if (typeof answer.valueInteger === 'number') return answer.valueInteger;
  for (const key of ['valueDate', 'valueDateTime', 'valueTime', 'valueString', 'valueUri'] as const)
    if (typeof answer[key] === 'string') return answer[key] as string;
  if (isObject(answer.valueCoding)) {
    const coding = answer.valueCoding;
    const code = str(coding.code) ?? str(coding.display);
    if (code === undefined) return undefined;
    return str(coding.system) && str(coding.code) ? `${String(coding.system)}|${code}` : code;
  }
  if (isObject(answer.valueQuantity)) {
    const q = answer.valueQuantity;
    if (typeof q.value !== 'number') return undefined;
    const unit = str(q.unit) ?? str(q.code);
    return `${str(q.comparator) ?? ''}${q.value}${unit ? ` ${unit}` : ''}`;
  }
  if (isObject(answer.valueReference)) return str(answer.valueReference.reference) ?? str(answer.valueReference.display) ?? null;
  if (isObject(answer.valueAttachment)) return str(answer.valueAttachment.url) ?? str(answer.valueAttachment.title) ?? null;
  return undefined;
}

function collectAnswers(items: unknown[], prefix: string, path: string, out: Record<string, Answer | Answer[]>, issues: StructureIssue[]): void {
  items.forEach((item, i) => {
    if (!isObject(item)) return;
    const at = `${path}.item[${i}]`;
    const linkId = String(item.linkId);
    const key = prefix ? `${prefix}.${linkId}` : linkId;
    const answers = list(item.answer).filter(isObject);
    const values: Answer[] = [];
    answers.forEach((answer, j) => {
      const value = answerValue(answer);
      if (value === undefined) issues.push({ expression: `${at}.answer[${j}]`, message: 'needs a value[x]' });
      else values.push(value);
      collectAnswers(list(answer.item), key, `${at}.answer[${j}]`, out, issues);
    });
    if (values.length > 0) {
      if (Object.prototype.hasOwnProperty.call(out, key)) issues.push({ expression: `${at}.linkId`, message: 'is used by another item at the same place' });
      else out[key] = values.length === 1 ? values[0]! : values;
    }
    collectAnswers(list(item.item), key, at, out, issues);
  });
}

function patientOf(
  response: FhirObject,
  bundle: BundleIndex | undefined,
  path: string,
  issues: StructureIssue[],
): { patient?: FhirObject; patientId?: string } {
  const subject = isObject(response.subject) ? response.subject : undefined;
  if (!subject || typeof subject.reference !== 'string') {
    issues.push({ expression: `${path}.subject`, message: 'is required: a reference to the Patient (contained, or a Bundle entry) with name and birth date' });
    return {};
  }
  const resolved = resolveReference(subject.reference, response, bundle);
  if ((resolved.kind === 'contained' || resolved.kind === 'entry') && resolved.resource.resourceType === 'Patient') return { patient: resolved.resource };
  if (resolved.kind === 'external' && resolved.type === 'Patient' && resolved.id) {
    // the chart patient by id: the demographics come from a contained Patient (the intake checks them)
    const contained = list(response.contained).find((r) => isObject(r) && r.resourceType === 'Patient') as FhirObject | undefined;
    if (!contained) {
      issues.push({
        expression: `${path}.contained`,
        message: 'a subject Patient/<id> needs a contained Patient with the name and birth date the form was filled in for',
      });
      return {};
    }
    return { patient: contained, patientId: resolved.id };
  }
  issues.push({
    expression: `${path}.subject.reference`,
    message: 'must be a contained Patient (#id), a Patient entry of the Bundle, or Patient/<chart patient id>',
  });
  return {};
}

export interface FormMappingContext {
  bundle?: BundleIndex;
  path: string;
}

export function formPacketFromResponse(response: FhirObject, context: FormMappingContext): FormMappingResult {
  const { path } = context;
  const issues: StructureIssue[] = [];
  const meta = isObject(response.meta) ? response.meta : {};
  const identifier = isObject(response.identifier) ? response.identifier : undefined;
  // meta.source names the source system when sent; else identifier.system (the submission ids' namespace)
  const sourceSystemId = str(meta.source) ?? str(identifier?.system);
  if (!sourceSystemId)
    issues.push({ expression: `${path}.meta.source`, message: 'is required (or identifier.system): the form source system, one your partner owns' });
  const submissionId = str(identifier?.value);
  if (!submissionId) issues.push({ expression: `${path}.identifier.value`, message: 'is required: the submission id that makes a resend the same submission' });
  const formId = str(response.questionnaire);
  if (!formId) issues.push({ expression: `${path}.questionnaire`, message: 'is required: the canonical URL of the Questionnaire' });
  const { patient, patientId } = patientOf(response, context.bundle, path, issues);
  const answers: Record<string, Answer | Answer[]> = {};
  collectAnswers(list(response.item), '', path, answers, issues);
  if (issues.length > 0 || !patient) return { ok: false, issues };

  const name = list(patient.name).find(isObject);
  const email = list(patient.telecom).find((t) => isObject(t) && t.system === 'email' && str(t.value)) as FhirObject | undefined;
  const externalPatientId = list(patient.identifier)
    .filter(isObject)
    .map((i) => str(i.value))
    .find((v) => v !== undefined);
  const formName = isObject(response._questionnaire)
    ? list(response._questionnaire.extension)
        .filter(isObject)
        .map((x) => str(x.valueString))
        .find((v) => v !== undefined)
    : undefined;
  const payloadPatient = Object.fromEntries(
    Object.entries({
      externalPatientId,
      firstName: str(list(name?.given)[0]),
      lastName: str(name?.family),
      dob: str(patient.birthDate),
      email: email ? String(email.value) : undefined,
    }).filter(([, v]) => v !== undefined),
  );
  return {
    ok: true,
    body: {
      payload: Object.fromEntries(
        Object.entries({ sourceSystemId, formId, formName, submissionId, patientId, patient: payloadPatient, answers }).filter(([, v]) => v !== undefined),
      ),
    },
  };
}

/** A form packet validation pointer as the FHIRPath of the element it came from. */
export function expressionOfFormPointer(pointer: string, path: string, patientPath: string): string {
  if (pointer.startsWith('/payload/sourceSystemId')) return `${path}.meta.source`;
  if (pointer.startsWith('/payload/formId')) return `${path}.questionnaire`;
  if (pointer.startsWith('/payload/formName')) return `${path}.questionnaire.display`;
  if (pointer.startsWith('/payload/submissionId')) return `${path}.identifier.value`;
  if (pointer.startsWith('/payload/patientId') || pointer.startsWith('/payload/patient/patientId')) return `${path}.subject`;
  const patient: Record<string, string> = {
    firstName: 'name[0].given[0]',
    lastName: 'name[0].family',
    dob: 'birthDate',
    email: 'telecom',
    externalPatientId: 'identifier[0].value',
  };
  const field = /^\/payload\/patient(?:\/(\w+))?/.exec(pointer);
  if (field) return field[1] ? `${patientPath}.${patient[field[1]] ?? field[1]}` : patientPath;
  if (pointer.startsWith('/payload/answers')) return `${path}.item`;
  return path;
}
