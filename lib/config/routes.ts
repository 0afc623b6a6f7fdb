/**
 * The HTTP routes: what the running functions need of the endpoint list (the authorizer matches a
 * request to its route and scope; each endpoint's pipeline reads its own name, scope, `anonymous`
 * and `format`). What infra deploys per endpoint (needs, memory, timeout, bundled files) is in
 * lib/config/endpoint-list.ts, keyed by these names, so a Lambda bundle carries this table only.
 * Part of the service facts (lib/config/service.ts re-exports it). Side-effect free at module
 * level (plain literals), so esbuild leaves out of a bundle whatever it does not use.
 */
import { Scopes, type Scope } from './scopes';

export interface HttpRoute {
  /** function name and file: functions/<name>.ts exporting `handler` */
  name: string;
  method: 'GET' | 'POST';
  /** API Gateway resource path, `{param}` for path parameters */
  path: string;
  scope: Scope;
  /**
   * Served without a key or token (the staff page's static files): the authorizer counts the
   * request against the anonymous limit of the caller's address and never checks `scope`.
   */
  anonymous?: true;
  /** reads the staff sign-in settings (Env.staff*; the authorizer always does) */
  staffSignIn?: true;
  /** `fhir`: success and errors are FHIR R4 JSON (OperationOutcome); default: problem+json errors */
  format?: 'fhir';
}

const exportHl7 = Scopes.exportHl7;
const exportFhir = Scopes.exportFhir;
const ingestFhir = Scopes.ingestFhir;

/**
 * The route list, in the order of the endpoint list. A new endpoint is one file in functions/, one
 * line here and its deployment facts in lib/config/endpoint-list.ts (the compiler asks for them).
 */
const ROUTES = [
  { name: 'exportHl7PatientAdt', method: 'GET', path: '/exportHl7PatientAdt', scope: exportHl7 },
  { name: 'exportHl7PatientSummary', method: 'GET', path: '/exportHl7PatientSummary', scope: exportHl7 },
  { name: 'exportHl7Encounter', method: 'GET', path: '/exportHl7Encounter', scope: exportHl7 },
  { name: 'exportHl7Note', method: 'GET', path: '/exportHl7Note', scope: exportHl7 },
  { name: 'exportHl7Assessment', method: 'GET', path: '/exportHl7Assessment', scope: exportHl7 },
  { name: 'receiveTestData', method: 'POST', path: '/receiveTestData', scope: Scopes.ingestResults },
  { name: 'exportHl7LabResult', method: 'GET', path: '/exportHl7LabResult', scope: exportHl7 },
  { name: 'receiveFormIntakeScope', method: 'POST', path: '/receiveFormIntakeScope', scope: Scopes.ingestForms },
  { name: 'receiveHl7', method: 'POST', path: '/receiveHl7', scope: Scopes.ingestHl7 },
  { name: 'listInteropInbox', method: 'GET', path: '/interopInbox', scope: Scopes.inboxRead },
  // records HL7 intake held for review (docs/write-authority.md): static `held` beside {packetId}
  { name: 'listHeldRecords', method: 'GET', path: '/interopInbox/held', scope: Scopes.inboxRead },
  { name: 'getHeldRecord', method: 'GET', path: '/interopInbox/held/{heldId}', scope: Scopes.inboxRead },
  { name: 'routeHeldRecord', method: 'POST', path: '/interopInbox/held/{heldId}/route', scope: Scopes.inboxReview },
  // reviewers only, like the packet search (the match index lives in the forms table)
  { name: 'searchHeldPatients', method: 'POST', path: '/interopInbox/held/{heldId}/patientSearch', scope: Scopes.inboxReview },
  { name: 'getInboxPacket', method: 'GET', path: '/interopInbox/{packetId}', scope: Scopes.inboxRead },
  { name: 'routeInboxPacket', method: 'POST', path: '/interopInbox/{packetId}/route', scope: Scopes.inboxReview },
  // reviewers only: the search shows chart demographics beyond the packet's own candidates
  { name: 'searchInboxPatients', method: 'POST', path: '/interopInbox/{packetId}/patientSearch', scope: Scopes.inboxReview },
  { name: 'getInboxCandidates', method: 'GET', path: '/interopInbox/{packetId}/candidates', scope: Scopes.inboxRead },
  { name: 'serveInboxPage', method: 'GET', path: '/inbox', scope: Scopes.inboxRead, anonymous: true, staffSignIn: true },
  // the API reference, published with every stage (docs/openapi.json rendered by Redoc); the
  // scope is never checked (anonymous), only the anonymous rate limit applies
  { name: 'serveOpenApiDocument', method: 'GET', path: '/openapi.json', scope: exportHl7, anonymous: true },
  { name: 'serveApiReference', method: 'GET', path: '/docs', scope: exportHl7, anonymous: true },
  // FHIR R4 read API (docs/fhir.md): ids carry their patient, `<patient>..<record>`
  { name: 'fhirMetadata', method: 'GET', path: '/fhir/metadata', scope: exportFhir, format: 'fhir', anonymous: true },
  { name: 'fhirPatientRead', method: 'GET', path: '/fhir/Patient/{id}', scope: exportFhir, format: 'fhir' },
  { name: 'fhirPatientSearch', method: 'GET', path: '/fhir/Patient', scope: exportFhir, format: 'fhir' },
  { name: 'fhirPatientEverything', method: 'GET', path: '/fhir/Patient/{id}/$everything', scope: exportFhir, format: 'fhir' },
  { name: 'fhirEncounterRead', method: 'GET', path: '/fhir/Encounter/{id}', scope: exportFhir, format: 'fhir' },
  { name: 'fhirEncounterSearch', method: 'GET', path: '/fhir/Encounter', scope: exportFhir, format: 'fhir' },
  { name: 'fhirDocumentReferenceRead', method: 'GET', path: '/fhir/DocumentReference/{id}', scope: exportFhir, format: 'fhir' },
  { name: 'fhirDocumentReferenceSearch', method: 'GET', path: '/fhir/DocumentReference', scope: exportFhir, format: 'fhir' },
  // assessments and lab Observations (`<patient>..<result>..<n>`)
  { name: 'fhirObservationRead', method: 'GET', path: '/fhir/Observation/{id}', scope: exportFhir, format: 'fhir' },
  { name: 'fhirObservationSearch', method: 'GET', path: '/fhir/Observation', scope: exportFhir, format: 'fhir' },
  { name: 'fhirDiagnosticReportRead', method: 'GET', path: '/fhir/DiagnosticReport/{id}', scope: exportFhir, format: 'fhir' },
  { name: 'fhirDiagnosticReportSearch', method: 'GET', path: '/fhir/DiagnosticReport', scope: exportFhir, format: 'fhir' },
  // FHIR R4 intake (docs/fhir.md "Intake"): exact POST routes, so the greedy GET /fhir/{proxy+} never takes them
  { name: 'receiveFhirBundle', method: 'POST', path: '/fhir', scope: ingestFhir, format: 'fhir' },
  { name: 'receiveFhirDiagnosticReport', method: 'POST', path: '/fhir/DiagnosticReport', scope: ingestFhir, format: 'fhir' },
  { name: 'receiveFhirQuestionnaireResponse', method: 'POST', path: '/fhir/QuestionnaireResponse', scope: ingestFhir, format: 'fhir' },
  // every other path under /fhir: 404 OperationOutcome instead of the gateway's problem+json (reads nothing)
  { name: 'fhirRouteNotFound', method: 'GET', path: '/fhir/{proxy+}', scope: exportFhir, format: 'fhir' },
] as const satisfies readonly HttpRoute[];

/** The name of a route of the list (functions/<name>.ts). */
export type EndpointName = (typeof ROUTES)[number]['name'];
export const HttpRoutes: readonly HttpRoute[] = ROUTES;

export function endpointByRoute(method: string, path: string): HttpRoute | undefined {
  return HttpRoutes.find((e) => e.method === method && e.path === path);
}

/** The route of the endpoint called `name` (functions/<name>.ts). */
export function routeNamed(name: string): HttpRoute | undefined {
  return HttpRoutes.find((e) => e.name === name);
}

/**
 * The methods the endpoint list defines on a path template (e.g. `/interopInbox/{packetId}`),
 * sorted: the `Allow` header of a 405 for any other method on that path, locally and in the cloud.
 */
export function allowedMethods(pathTemplate: string): string[] {
  return [...new Set(HttpRoutes.filter((e) => e.path === pathTemplate).map((e) => e.method))].sort();
}
