/**
 * FHIR R4 intake (POST /fhir, /fhir/DiagnosticReport, /fhir/QuestionnaireResponse; docs/fhir.md
 * "Intake"): one more door into the lab model and the form packets, with the rules of the other doors.
 *
 *   1. structure   lib/fhir-intake/structure.ts: R4 types, cardinality, formats, required codes
 *   2. prepare     every entry mapped (lab-report-mapping.ts, questionnaire-mapping.ts), its sender or
 *                  form source checked against the partner, its patient resolved (reads only: partner
 *                  identities, the chart's MRN index, identifier systems another partner owns refused),
 *                  its body checked by the same validators as POST /receiveTestData and
 *                  /receiveFormIntakeScope. Nothing is written before every entry of a transaction passed.
 *   3. write       lab results through receiveLabResult (the writer of HL7 ORU intake: encryption,
 *                  versions, current pointer, notification), results of an unresolved patient held for
 *                  review (lib/intake/held-records.ts) exactly as ORU results are; QuestionnaireResponses
 *                  through receiveFormPacket (matching, inbox, 409 for a changed resubmission).
 *
 * The answers never depend on whether a patient is known (no existence oracle): a report about an
 * unknown patient is stored and held, answered like one filed to the chart. Idempotency: the same
 * Bundle.identifier (or x-request-id) with the same content answers the first outcome (nothing new
 * stored); with other content a 409. Without either, resends are still harmless: a lab result of the
 * same content is the same version (`200 OK`, nothing new), a form submission id the same packet.
 *
 * A transaction is all or nothing as far as the service decides it: every refusal is found before
 * the first write. DynamoDB Local (dynalite) has no TransactWriteItems, and the writes span tables,
 * KMS and S3, so a dependency failing midway (a 503) can leave the first entries stored: the
 * idempotency claim is released, and sending the same Bundle again completes it (each write is
 * idempotent: the same version, the same packet, the held record's conditional put).
 */
import { ConflictError, ContentTooLargeError, ForbiddenByPolicyError, ValidationFailedError } from '../domain-errors';
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
import { logicalId } from '../fhir/logical-id';
import { operationOutcome } from '../fhir/operation-outcome';
import { normaliseAuthority, normaliseMrn } from '../chart/identifiers';
import { mrnAuthorityOf } from '../fhir/chart-resources';
import type { PersonName } from '../chart/types';
import { heldIdFor, type ClaimedPerson } from '../intake/held-records';
import type { HandlerDependencies } from '../intake/message-handlers';
import { patientIdFor } from '../intake/message-handlers';
import { identityKeyOf } from '../intake/partner-identities';
import { demographicsAgree, findChartPatient, senderIdentityKey, type Identifier, type Resolution } from '../intake/patient-resolution';
import type { Principal } from '../keys/access-decision';
import { logger } from '../observability/logger';
import { canonicalJson } from '../results/canonical-json';
import type { IdempotencyStore, StoredResponse } from '../results/idempotency';
import { receiveLabResult, senderAllowed } from '../results/receive';
import { acceptLabResult } from '../results/validation';
import { expressionOfPointer, labResultFromReport, type SubjectClaim } from './lab-report-mapping';
import { expressionOfFormPointer, formPacketFromResponse } from './questionnaire-mapping';
import { indexBundle, isObject, resolveReference, type BundleIndex, type FhirObject } from './references';
import { structuralIssues, type StructureIssue } from './structure';

export const RECEIVE_FHIR_ENDPOINT = 'receiveFhir';
/** Entries of one Bundle (bounded work: each may be a report with up to 200 Observations). */
export const MAX_BUNDLE_ENTRIES = 100;

export type FhirIntakeRoute = 'Bundle' | 'DiagnosticReport' | 'QuestionnaireResponse';

export interface FhirIntakeDependencies {
  lab: HandlerDependencies;
  idempotency: Pick<IdempotencyStore, 'begin' | 'complete' | 'release'>;
  forms: FormIntakeDependencies;
}

export interface FhirIntakeInput {
  route: FhirIntakeRoute;
  body: unknown;
  principal: Principal;
  requestId: string;
  /** true when the caller sent x-request-id (idempotency on it when the Bundle has no identifier) */
  requestIdSupplied: boolean;
  now: Date;
}

export interface FhirIntakeAnswer {
  status: number;
  body: FhirObject;
  headers?: Record<string, string>;
  /** the first answer of this Bundle.identifier / x-request-id, replayed */
  replayed: boolean;
  audit: { action: string; patientId?: string; resourceIds: Record<string, string> };
}

/** A refusal of one entry (or of a single resource): its HTTP status and issues with FHIRPath expressions. */
class EntryRefusal extends Error {
  constructor(
    readonly status: 400 | 403 | 409 | 413,
    readonly issues: StructureIssue[],
  ) {
    super('refused');
  }
}

type Prepared =
  | { kind: 'lab'; index: number; path: string; body: { data: Record<string, unknown> }; claim: SubjectClaim; resolution?: Resolution; ifNoneExist: boolean }
  | { kind: 'form'; index: number; path: string; body: FormIntakeBody; ifNoneExist: boolean }
  | { kind: 'supporting'; index: number; path: string; resourceType: string };

type EntryOutcome =
  | { ok: true; status: '201 Created' | '200 OK'; location?: string; note?: string; resultId?: string; packetId?: string; patientId?: string; held?: boolean }
  | { ok: false; refusal: EntryRefusal };

const STATUS_TEXT: Record<number, string> = { 400: '400 Bad Request', 403: '403 Forbidden', 409: '409 Conflict', 413: '413 Payload Too Large' };

function outcomeOf(status: number, issues: StructureIssue[], requestId: string, detail: string): FhirObject {
  const base = operationOutcome({ status, detail, requestId });
  const code = base.issue[0]!.code;
  const severity = status >= 400 ? 'error' : 'information';
  return {
    ...base,
    issue: (issues.length > 0 ? issues : [{ expression: '', message: detail }]).map((issue) => ({
      severity,
      code,
      diagnostics: issue.message,
      ...(issue.expression ? { expression: [issue.expression] } : {}),
    })),
  } as unknown as FhirObject;
}

function informationOutcome(text: string, requestId: string): FhirObject {
  const base = operationOutcome({ status: 200, detail: text, requestId });
  return { ...base, issue: [{ severity: 'information', code: 'informational', diagnostics: text }] } as unknown as FhirObject;
}

/** The sender a report is filed under: meta.source when it names one of the partner's senders, else the partner's first sender. */
function senderFor(resource: FhirObject, principal: Principal): string | undefined {
  const source = isObject(resource.meta) && typeof resource.meta.source === 'string' ? resource.meta.source : undefined;
  const allowed = (principal.allowedSenderIds ?? []).filter((s) => s !== '*');
  if (source && (allowed.includes(source) || (principal.allowedSenderIds ?? []).includes('*'))) return source;
  return allowed[0] ?? ((principal.allowedSenderIds ?? []).includes('*') ? principal.partnerId : undefined);
}

const GENDER_SEX: Record<string, string> = { male: 'M', female: 'F', other: 'O', unknown: 'U' };

function personOf(patient: FhirObject | undefined, identifiers: Identifier[]): ClaimedPerson {
  const name = Array.isArray(patient?.name) ? (patient.name.find(isObject) as FhirObject | undefined) : undefined;
  const family = typeof name?.family === 'string' ? name.family : undefined;
  const given = Array.isArray(name?.given) && typeof name.given[0] === 'string' ? name.given[0] : undefined;
  const personName: PersonName | undefined = family ? { family, ...(given ? { given } : {}) } : undefined;
  const birthDate = typeof patient?.birthDate === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(patient.birthDate) ? patient.birthDate : undefined;
  const sex = typeof patient?.gender === 'string' ? GENDER_SEX[patient.gender] : undefined;
  return {
    ...(personName ? { name: personName } : {}),
    ...(birthDate ? { birthDate } : {}),
    ...(sex ? { sex } : {}),
    identifiers: identifiers.map((id) => ({ value: id.value, authority: id.authority })),
  };
}

/** Identifier.system -> an assigning authority: the chart's `urn:interop:mrn:<A>` read back, else the system itself. */
export function authorityOfSystem(system: unknown): string {
  if (typeof system !== 'string' || system === '') return '';
  return normaliseAuthority(mrnAuthorityOf(system) ?? system);
}

/**
 * Who a report is about (docs/write-authority.md "Patient resolution", as for HL7 PID-3): the sender's
 * identities, then the chart's MRN index with agreeing demographics; an identifier system another
 * partner owns is refused (403) before anything is read or stored. Reads only.
 */
async function resolveSubject(claim: Extract<SubjectClaim, { kind: 'identified' }>, partnerId: string, deps: HandlerDependencies): Promise<Resolution> {
  const identifiers: Identifier[] = [];
  claim.identifiers.forEach((identifier, i) => {
    const value = typeof identifier.value === 'string' ? normaliseMrn(identifier.value) : '';
    const authority = authorityOfSystem(identifier.system);
    const at = claim.patient ? `${claim.expression}.resolve().identifier[${i}]` : claim.expression;
    if (value === '') return;
    if (value.length > 128 || authority.length > 128)
      throw new EntryRefusal(400, [{ expression: at, message: 'identifier value and system must be at most 128 characters' }]);
    const type =
      isObject(identifier.type) && Array.isArray(identifier.type.coding) && isObject(identifier.type.coding[0])
        ? String(identifier.type.coding[0].code ?? '')
        : '';
    identifiers.push({ value, authority, type });
  });
  if (identifiers.length === 0)
    throw new EntryRefusal(400, [{ expression: claim.expression, message: 'the Patient needs an identifier with a value (the MRN)' }]);
  identifiers.sort((a, b) => Number(b.type === 'MR') - Number(a.type === 'MR'));
  const own: Identifier[] = [];
  for (const id of identifiers) {
    if (id.authority !== '' && id.authority === deps.authorities.chart) continue;
    const owner = id.authority === '' ? undefined : await deps.authorities.ownerOf(id.authority);
    if (owner !== undefined && owner !== partnerId)
      throw new EntryRefusal(403, [{ expression: claim.expression, message: 'the identifier system is an assigning authority of another partner' }]);
    own.push(id);
  }
  const keys = await deps.keys();
  const person = personOf(claim.patient, identifiers);
  const identityKey = senderIdentityKey(keys, partnerId, own, identifiers);
  for (const id of identifiers) {
    const identity = await deps.identities.get(identityKeyOf(partnerId, keys.patientIdentifierKey(id.authority, id.value)));
    if (identity?.linkedPatientId) return { patientId: identity.linkedPatientId, person, identityKey };
  }
  const chart = await findChartPatient(identifiers, keys, deps);
  if (!chart.patient) return { reason: 'patient-unresolved', person, identityKey };
  if (!demographicsAgree(chart.patient, person, false)) return { reason: 'demographics-differ', person, identityKey };
  return { patientId: chart.patient.patientId, person, identityKey };
}

function entryPath(route: FhirIntakeRoute, index: number): string {
  return route === 'Bundle' ? `Bundle.entry[${index}].resource` : route;
}

/** Maps, authorises, resolves and validates one resource (reads only). */
async function prepare(
  resource: FhirObject,
  index: number,
  path: string,
  input: FhirIntakeInput,
  deps: FhirIntakeDependencies,
  bundle: BundleIndex | undefined,
  ifNoneExist: boolean,
): Promise<Prepared> {
  if (resource.resourceType === 'DiagnosticReport') {
    const sender = senderFor(resource, input.principal);
    if (!sender || !senderAllowed(input.principal, sender))
      throw new EntryRefusal(403, [{ expression: `${path}.meta.source`, message: 'this partner has no lab sender id to file results under' }]);
    const mapped = labResultFromReport(resource, { sender, bundle, path, now: input.now });
    if (!mapped.ok) throw new EntryRefusal(400, mapped.issues);
    const claim = mapped.mapping.subject;
    const resolution = claim.kind === 'identified' ? await resolveSubject(claim, input.principal.partnerId, deps.lab) : undefined;
    const patientID = claim.kind === 'chart' ? claim.patientId : (resolution!.patientId ?? patientIdFor(resolution!.identityKey));
    const body = { data: { ...mapped.mapping.data, patientID } };
    try {
      acceptLabResult(body, input.now);
    } catch (error) {
      if (!(error instanceof ValidationFailedError)) throw error;
      throw new EntryRefusal(
        400,
        error.errors.slice(0, 20).map((fieldError) => {
          const pointer = 'pointer' in fieldError ? fieldError.pointer : '';
          return { expression: expressionOfPointer(pointer, path), message: fieldError.message };
        }),
      );
    }
    return { kind: 'lab', index, path, body, claim, ...(resolution ? { resolution } : {}), ifNoneExist };
  }
  if (resource.resourceType === 'QuestionnaireResponse') {
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
    return { kind: 'form', index, path, body: validation.body, ifNoneExist };
  }
  return { kind: 'supporting', index, path, resourceType: String(resource.resourceType) };
}

/** Stores one prepared entry; an unresolved patient's result is held for review as an ORU result is. */
async function write(entry: Prepared, input: FhirIntakeInput, deps: FhirIntakeDependencies, sourceMessageId: string): Promise<EntryOutcome> {
  if (entry.kind === 'supporting') return { ok: true, status: '200 OK', note: 'taken as part of the report or response that references it' };
  if (entry.kind === 'form') {
    let result: IntakeResult;
    try {
      result = await receiveFormPacket(entry.body, input.principal, input.now, deps.forms);
    } catch (error) {
      if (error instanceof ConflictError) throw new EntryRefusal(409, [{ expression: `${entry.path}.identifier`, message: error.message }]);
      if (error instanceof ForbiddenByPolicyError) throw new EntryRefusal(403, [{ expression: `${entry.path}.meta.source`, message: error.message }]);
      if (error instanceof ContentTooLargeError) throw new EntryRefusal(413, [{ expression: `${entry.path}.item`, message: error.message }]);
      throw error;
    }
    return {
      ok: true,
      status: result.kind === 'created' ? '201 Created' : '200 OK',
      packetId: result.packet.packetId,
      ...(result.packet.patientId ? { patientId: result.packet.patientId } : {}),
    };
  }
  const outcome = await receiveLabResult(
    { body: entry.body, principal: input.principal, requestId: input.requestId, requestIdSupplied: false, sourceMessageId, now: input.now },
    deps.lab.labResults,
  );
  const resultId = outcome.body.resultId;
  let held = false;
  if (entry.resolution && !entry.resolution.patientId) {
    const keys = await deps.lab.keys();
    const heldKey = keys.patientIdentifierKey(
      'held',
      ['fhir-lab-result', input.principal.partnerId, outcome.body.version, entry.resolution.identityKey].join('\u0000'),
    );
    await deps.lab.held.hold({
      heldId: heldIdFor(input.now.toISOString(), heldKey),
      provenance: { partnerId: input.principal.partnerId, sender: String(entry.body.data.senderID), sourceMessageId, receivedAt: input.now.toISOString() },
      person: entry.resolution.person,
      body: { kind: 'lab-result', resultIds: [resultId] },
      reason: entry.resolution.reason ?? 'patient-unresolved',
    });
    held = true;
  }
  const patientId = entry.claim.kind === 'chart' ? entry.claim.patientId : entry.resolution?.patientId;
  return {
    ok: true,
    status: outcome.body.duplicate ? '200 OK' : '201 Created',
    resultId,
    held,
    // readable through GET /fhir/DiagnosticReport/{id} when the sender named the chart patient by id (it
    // already knows that id); a patient named by identifier gets no location either way (no existence oracle)
    ...(entry.claim.kind === 'chart' ? { location: `DiagnosticReport/${logicalId(entry.claim.patientId, resultId)}` } : {}),
    ...(patientId ? { patientId } : {}),
  };
}

function refusalAnswer(refusal: EntryRefusal, requestId: string): { status: number; body: FhirObject } {
  return { status: refusal.status, body: outcomeOf(refusal.status, refusal.issues, requestId, 'the resource was refused: see each issue') };
}

interface EntryRequest {
  resource: FhirObject;
  index: number;
  ifNoneExist: boolean;
}

/** Bundle.type and entry.request rules (transaction / batch of POSTs). */
function bundleEntries(bundle: FhirObject): { type: 'transaction' | 'batch'; entries: EntryRequest[]; refusals: Map<number, EntryRefusal> } {
  const type = bundle.type;
  if (type !== 'transaction' && type !== 'batch')
    throw new EntryRefusal(400, [
      { expression: 'Bundle.type', message: 'must be transaction or batch (this endpoint processes Bundles, it does not store them)' },
    ]);
  const raw = Array.isArray(bundle.entry) ? bundle.entry : [];
  if (raw.length === 0) throw new EntryRefusal(400, [{ expression: 'Bundle.entry', message: 'is required: at least one entry' }]);
  if (raw.length > MAX_BUNDLE_ENTRIES)
    throw new EntryRefusal(400, [{ expression: 'Bundle.entry', message: `at most ${MAX_BUNDLE_ENTRIES} entries (send several Bundles)` }]);
  const entries: EntryRequest[] = [];
  const refusals = new Map<number, EntryRefusal>();
  raw.forEach((entry, index) => {
    const at = `Bundle.entry[${index}]`;
    const e = entry as FhirObject;
    const request = isObject(e.request) ? e.request : undefined;
    const resource = isObject(e.resource) ? e.resource : undefined;
    if (!resource) refusals.set(index, new EntryRefusal(400, [{ expression: `${at}.resource`, message: 'is required' }]));
    else if (!request) refusals.set(index, new EntryRefusal(400, [{ expression: `${at}.request`, message: `is required in a ${type}` }]));
    else if (request.method !== 'POST')
      refusals.set(index, new EntryRefusal(400, [{ expression: `${at}.request.method`, message: 'only POST (create) is taken by this endpoint' }]));
    else if (typeof request.url !== 'string' || request.url.split('?')[0] !== resource.resourceType)
      refusals.set(
        index,
        new EntryRefusal(400, [{ expression: `${at}.request.url`, message: 'must be the resource type of the entry (e.g. DiagnosticReport)' }]),
      );
    else entries.push({ resource, index, ifNoneExist: typeof request.ifNoneExist === 'string' });
  });
  return { type, entries, refusals };
}

/** What an entry that stored (or found) a lab result or a form packet answers: the id to ask about it with. */
function storedText(outcome: EntryOutcome & { ok: true }): string | undefined {
  const again = outcome.status === '200 OK';
  if (outcome.resultId) return `the lab result was ${again ? 'already stored (nothing new)' : 'stored'}: resultId ${outcome.resultId}`;
  if (outcome.packetId) return `the form response was ${again ? 'already received (nothing new)' : 'received'}: packetId ${outcome.packetId}`;
  return undefined;
}

function entryResponse(outcome: EntryOutcome, requestId: string): FhirObject {
  if (!outcome.ok)
    return {
      response: { status: STATUS_TEXT[outcome.refusal.status]!, outcome: refusalAnswer(outcome.refusal, requestId).body },
    };
  // a form packet has no FHIR read (no location), so without its packetId a Bundle's sender could not ask about it
  const text = outcome.note ?? storedText(outcome);
  return {
    response: {
      status: outcome.status,
      ...(outcome.location ? { location: outcome.location } : {}),
      ...(text ? { outcome: informationOutcome(text, requestId) } : {}),
    },
  };
}

/** The Bundle's idempotency key: Bundle.identifier, else x-request-id; none without either. */
function idempotencyName(input: FhirIntakeInput): string | undefined {
  if (input.route === 'Bundle' && isObject(input.body) && isObject(input.body.identifier)) {
    const { system, value } = input.body.identifier;
    if (typeof value === 'string' && value !== '') return `bundle:${input.route}:${typeof system === 'string' ? system : ''}|${value}`;
  }
  return input.requestIdSupplied ? `request:${input.route}:${input.requestId}` : undefined;
}

export async function receiveFhir(input: FhirIntakeInput, deps: FhirIntakeDependencies): Promise<FhirIntakeAnswer> {
  const structure = structuralIssues(input.body, input.route);
  const refusedWhole = (refusal: EntryRefusal, action = 'fhir.intake_refused'): FhirIntakeAnswer => ({
    ...refusalAnswer(refusal, input.requestId),
    replayed: false,
    audit: { action, resourceIds: { route: input.route, status: String(refusal.status) } },
  });
  if (structure.length > 0) return refusedWhole(new EntryRefusal(400, structure));
  const body = input.body as FhirObject;

  const name = idempotencyName(input);
  let claim: { key: string; token: string } | undefined;
  if (name) {
    const keys = await deps.lab.keys();
    const key = keys.idempotencyKey(RECEIVE_FHIR_ENDPOINT, input.principal.partnerId, name);
    try {
      const begun = await deps.idempotency.begin(key, keys.bodyFingerprint(canonicalJson(body)), input.now);
      if (begun.kind === 'replay') {
        const stored = begun.response as StoredResponse & { body: FhirObject; headers?: Record<string, string>; audit?: FhirIntakeAnswer['audit'] };
        return {
          status: stored.status,
          body: stored.body,
          ...(stored.headers ? { headers: stored.headers } : {}),
          replayed: true,
          audit: stored.audit ?? { action: 'fhir.intake_replayed', resourceIds: { route: input.route } },
        };
      }
      claim = { key, token: begun.token };
    } catch (error) {
      if (error instanceof ConflictError)
        return refusedWhole(
          new EntryRefusal(409, [
            {
              expression: input.route === 'Bundle' && isObject(body.identifier) ? 'Bundle.identifier' : '',
              message:
                input.route === 'Bundle' && isObject(body.identifier)
                  ? 'this Bundle.identifier was already used for a Bundle with other content'
                  : 'this x-request-id was already used for another request',
            },
          ]),
        );
      throw error;
    }
  }
  try {
    const answer = await answerFor(input, deps, body);
    // only decided answers are kept: a refusal leaves no claim, so a corrected resend is processed
    if (claim) {
      if (answer.status < 300) {
        const stored = { status: answer.status, body: answer.body, headers: answer.headers, audit: answer.audit };
        await deps.idempotency
          .complete(claim.key, claim.token, stored)
          .catch((error: Error) => logger.warn('fhir_intake.idempotency_complete_failed', { requestId: input.requestId, errorName: error?.name }));
      } else await deps.idempotency.release(claim.key, claim.token).catch(() => undefined);
    }
    return answer;
  } catch (error) {
    if (claim) await deps.idempotency.release(claim.key, claim.token).catch(() => undefined);
    throw error;
  }
}

async function answerFor(input: FhirIntakeInput, deps: FhirIntakeDependencies, body: FhirObject): Promise<FhirIntakeAnswer> {
  const sourceMessageId = (isObject(body.identifier) && typeof body.identifier.value === 'string' ? body.identifier.value : undefined) ?? input.requestId;
  if (input.route !== 'Bundle') {
    let prepared: Prepared;
    let outcome: EntryOutcome;
    try {
      prepared = await prepare(body, 0, input.route, input, deps, undefined, false);
      outcome = await write(prepared, input, deps, typeof body.id === 'string' ? body.id : sourceMessageId);
    } catch (error) {
      if (error instanceof EntryRefusal)
        return { ...refusalAnswer(error, input.requestId), replayed: false, audit: auditOf(input, [{ ok: false, refusal: error }]) };
      throw error;
    }
    if (!outcome.ok) throw new Error('unreachable');
    return {
      status: outcome.status === '201 Created' ? 201 : 200,
      body: informationOutcome(storedText(outcome) ?? '', input.requestId),
      ...(outcome.location ? { headers: { location: outcome.location } } : {}),
      replayed: false,
      audit: auditOf(input, [outcome]),
    };
  }

  let plan: ReturnType<typeof bundleEntries>;
  try {
    plan = bundleEntries(body);
  } catch (error) {
    if (error instanceof EntryRefusal)
      return { ...refusalAnswer(error, input.requestId), replayed: false, audit: auditOf(input, [{ ok: false, refusal: error }]) };
    throw error;
  }
  const index = indexBundle(Array.isArray(body.entry) ? (body.entry as FhirObject[]) : []);
  const prepared = new Map<number, Prepared>();
  const outcomes = new Map<number, EntryOutcome>();
  for (const [i, refusal] of plan.refusals) outcomes.set(i, { ok: false, refusal });
  for (const entry of plan.entries) {
    try {
      prepared.set(entry.index, await prepare(entry.resource, entry.index, entryPath('Bundle', entry.index), input, deps, index, entry.ifNoneExist));
    } catch (error) {
      if (!(error instanceof EntryRefusal)) throw error;
      outcomes.set(entry.index, { ok: false, refusal: error });
    }
  }
  if (plan.type === 'transaction') {
    const refused = [...outcomes.values()].filter((o): o is Extract<EntryOutcome, { ok: false }> => !o.ok);
    // a form submission id used before with other content is found before the first write (the replay path of the form intake writes nothing)
    if (refused.length === 0) {
      for (const entry of prepared.values()) {
        if (entry.kind !== 'form') continue;
        const packetId = packetIdFor(input.principal.partnerId, entry.body.payload.sourceSystemId, entry.body.payload.submissionId);
        if (!(await deps.forms.store().getPacket(packetId, { withContent: false }))) continue;
        try {
          await receiveFormPacket(entry.body, input.principal, input.now, deps.forms);
        } catch (error) {
          if (!(error instanceof ConflictError)) throw error;
          refused.push({ ok: false, refusal: new EntryRefusal(409, [{ expression: `${entry.path}.identifier`, message: error.message }]) });
        }
      }
    }
    if (refused.length > 0) {
      const status = refused.some((r) => r.refusal.status === 403)
        ? 403
        : refused.some((r) => r.refusal.status === 409)
          ? 409
          : refused.some((r) => r.refusal.status === 413)
            ? 413
            : 400;
      const refusal = new EntryRefusal(
        status as 400 | 403 | 409 | 413,
        refused.flatMap((r) => r.refusal.issues),
      );
      return { ...refusalAnswer(refusal, input.requestId), replayed: false, audit: auditOf(input, refused) };
    }
  }
  for (const [i, entry] of [...prepared.entries()].sort(([a], [b]) => a - b)) {
    try {
      outcomes.set(i, await write(entry, input, deps, sourceMessageId));
    } catch (error) {
      if (!(error instanceof EntryRefusal)) throw error;
      outcomes.set(i, { ok: false, refusal: error });
    }
  }
  const ordered = [...outcomes.entries()].sort(([a], [b]) => a - b).map(([, o]) => o);
  return {
    status: 200,
    body: { resourceType: 'Bundle', type: `${plan.type}-response`, entry: ordered.map((o) => entryResponse(o, input.requestId)) },
    replayed: false,
    audit: auditOf(input, ordered),
  };
}

function auditOf(input: FhirIntakeInput, outcomes: EntryOutcome[]): FhirIntakeAnswer['audit'] {
  const stored = outcomes.filter((o): o is Extract<EntryOutcome, { ok: true }> => o.ok);
  const resultIds = stored.map((o) => o.resultId).filter((id): id is string => id !== undefined);
  const packetIds = stored.map((o) => o.packetId).filter((id): id is string => id !== undefined);
  const patients = [...new Set(stored.map((o) => o.patientId).filter((id): id is string => id !== undefined))];
  return {
    action: stored.length === 0 ? 'fhir.intake_refused' : 'fhir.intake',
    ...(patients.length === 1 ? { patientId: patients[0] } : {}),
    resourceIds: {
      route: input.route,
      ...(resultIds.length ? { resultIds: resultIds.join(',') } : {}),
      ...(packetIds.length ? { packetIds: packetIds.join(',') } : {}),
      stored: String(stored.filter((o) => o.status === '201 Created').length),
      unchanged: String(stored.filter((o) => o.status === '200 OK').length),
      refused: String(outcomes.length - stored.length),
      held: String(stored.filter((o) => o.held).length),
    },
  };
}
