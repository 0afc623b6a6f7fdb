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
 * This module is the part every route shares (structure, idempotency, answers); the Bundle rules
 * (transaction / batch) are bundle-intake.ts, given by the Bundle route's wiring only; steps 2
 * and 3 of each resource type are its preparer, lab-report-entries.ts (DiagnosticReport) and
 * questionnaire-response-entries.ts (QuestionnaireResponse), given by the route's wiring
 * (receive-fhir-wiring.ts for a Bundle: both; lab-report-wiring.ts, questionnaire-response-wiring.ts),
 * so a function bundles only the intake its route can run.
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
import { ConflictError } from '../domain-errors';
import { operationOutcome } from '../fhir/operation-outcome';
import type { Principal } from '../keys/access-decision';
import { logger } from '../observability/logger';
import { canonicalJson } from '../results/canonical-json';
import type { IdempotencyStore, StoredResponse } from '../results/idempotency';
import type { ResultKeys } from '../results/lookup-keys';
import { isObject, type BundleIndex, type FhirObject } from './references';
import { structuralIssues, type StructureIssue } from './structure';

export const RECEIVE_FHIR_ENDPOINT = 'receiveFhir';

export type FhirIntakeRoute = 'Bundle' | 'DiagnosticReport' | 'QuestionnaireResponse';

/** The resource types a route posts on its own; a Bundle may hold either (and their supporting resources). */
export type PostedResourceType = 'DiagnosticReport' | 'QuestionnaireResponse';

export interface FhirIntakeDependencies {
  /** the results table's keyed hashes (lib/results/lookup-keys.ts): a Bundle's or x-request-id's idempotency key and body fingerprint */
  keys(): Promise<Pick<ResultKeys, 'idempotencyKey' | 'bodyFingerprint'>>;
  idempotency: Pick<IdempotencyStore, 'begin' | 'complete' | 'release'>;
  /**
   * How each resource type the function takes is prepared and written: a function is wired with the
   * preparers its route can run (lab-report-entries.ts, questionnaire-response-entries.ts), so its
   * bundle carries no other (a DiagnosticReport function no form intake, a QuestionnaireResponse
   * function no lab result writer). A resource type without one is an internal error, never reached:
   * the structure check lets only the route's type through, and the Bundle function has both.
   */
  entries: Partial<Record<PostedResourceType, EntryPreparer>>;
  /** POST /fhir only: the Bundle rules (bundle-intake.ts answerBundle); a single-resource route has none */
  bundleIntake?: BundleIntake;
}

/** Answers a Bundle whose structure passed and whose idempotency is claimed (bundle-intake.ts). */
export type BundleIntake = (input: FhirIntakeInput, bundle: FhirObject, deps: FhirIntakeDependencies, sourceMessageId: string) => Promise<FhirIntakeAnswer>;

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
export class EntryRefusal extends Error {
  constructor(
    readonly status: 400 | 403 | 409 | 413,
    readonly issues: StructureIssue[],
  ) {
    super('refused');
  }
}

/** Where an entry is: its index in the Bundle (0 for a single resource), its FHIRPath, the Bundle's entries by fullUrl. */
export interface EntryPlace {
  index: number;
  path: string;
  bundle: BundleIndex | undefined;
}

export type EntryOutcome =
  | { ok: true; status: '201 Created' | '200 OK'; location?: string; note?: string; resultId?: string; packetId?: string; patientId?: string; held?: boolean }
  | { ok: false; refusal: EntryRefusal };

/** An entry mapped, authorised, resolved and validated (reads only), ready to be stored. */
export interface PreparedEntry {
  /**
   * A refusal found only by reading what is stored (a form submission id used before with other
   * content): a transaction asks every entry before its first write. Writes nothing.
   */
  refusalBeforeWrite?(): Promise<EntryRefusal | undefined>;
  /** Stores the entry (EntryRefusal for a refusal only the write finds). */
  write(sourceMessageId: string): Promise<EntryOutcome>;
}

/** Maps, authorises, resolves and validates one resource of its type (reads only); EntryRefusal when refused. */
export type EntryPreparer = (resource: FhirObject, place: EntryPlace, input: FhirIntakeInput) => Promise<PreparedEntry>;

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

export function informationOutcome(text: string, requestId: string): FhirObject {
  const base = operationOutcome({ status: 200, detail: text, requestId });
  return { ...base, issue: [{ severity: 'information', code: 'informational', diagnostics: text }] } as unknown as FhirObject;
}

/** An entry a report or response references (Observation, Specimen, Patient, ServiceRequest, Organization): nothing of its own to store. */
const SUPPORTING: PreparedEntry = {
  write: async () => ({ ok: true, status: '200 OK', note: 'taken as part of the report or response that references it' }),
};

/** Maps, authorises, resolves and validates one resource (reads only), by its type's preparer. */
export async function prepareEntry(resource: FhirObject, place: EntryPlace, input: FhirIntakeInput, deps: FhirIntakeDependencies): Promise<PreparedEntry> {
  const type = resource.resourceType;
  if (type !== 'DiagnosticReport' && type !== 'QuestionnaireResponse') return SUPPORTING;
  const preparer = deps.entries[type];
  if (!preparer) throw new Error(`FHIR intake is not wired for ${type}`);
  return preparer(resource, place, input);
}

export function refusalAnswer(refusal: EntryRefusal, requestId: string): { status: number; body: FhirObject } {
  return { status: refusal.status, body: outcomeOf(refusal.status, refusal.issues, requestId, 'the resource was refused: see each issue') };
}

/** What an entry that stored (or found) a lab result or a form packet answers: the id to ask about it with. */
export function storedText(outcome: EntryOutcome & { ok: true }): string | undefined {
  const again = outcome.status === '200 OK';
  if (outcome.resultId) return `the lab result was ${again ? 'already stored (nothing new)' : 'stored'}: resultId ${outcome.resultId}`;
  if (outcome.packetId) return `the form response was ${again ? 'already received (nothing new)' : 'received'}: packetId ${outcome.packetId}`;
  return undefined;
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
    const keys = await deps.keys();
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
    let outcome: EntryOutcome;
    try {
      const prepared = await prepareEntry(body, { index: 0, path: input.route, bundle: undefined }, input, deps);
      outcome = await prepared.write(typeof body.id === 'string' ? body.id : sourceMessageId);
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
  if (!deps.bundleIntake) throw new Error('FHIR intake is not wired for Bundles');
  return deps.bundleIntake(input, body, deps, sourceMessageId);
}

export function auditOf(input: FhirIntakeInput, outcomes: EntryOutcome[]): FhirIntakeAnswer['audit'] {
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
