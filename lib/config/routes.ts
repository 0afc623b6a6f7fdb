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
  /**
   * The scope a caller must hold; a list is any-of (a key holding one of them passes; the
   * endpoint's code then reads what that scope reaches: e.g. the lab result export and the FHIR
   * DiagnosticReport reads take an export scope or interop:read:own-results). Read it through
   * {@link routeScopes} / {@link holdsRouteScope}.
   */
  scope: Scope | readonly Scope[];
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

// plain identifiers in the routes below: a route object reading `Scopes.x` (a property access,
// which esbuild must assume may run a getter) would stay in every bundle, used or not
const exportHl7 = Scopes.exportHl7;
const exportFhir = Scopes.exportFhir;
const ingestFhir = Scopes.ingestFhir;
const ingestResults = Scopes.ingestResults;
const ingestForms = Scopes.ingestForms;
const ingestHl7 = Scopes.ingestHl7;
const inboxRead = Scopes.inboxRead;
const inboxReview = Scopes.inboxReview;
const readOwnResults = Scopes.readOwnResults;
const disclosuresRead = Scopes.disclosuresRead;

/**
 * One exported route per endpoint: functions/<name>.ts passes `<name>Route` to its pipeline
 * (lib/http/endpoint.ts), so its bundle holds that route and no other (the authorizer, which
 * matches every request, holds the list). A new endpoint is one file in functions/, one route
 * here, its place in ROUTES and its deployment facts in lib/config/endpoint-list.ts (the compiler
 * asks for them).
 */
export const exportHl7PatientAdtRoute = {
  name: 'exportHl7PatientAdt',
  method: 'GET',
  path: '/exportHl7PatientAdt',
  scope: exportHl7,
} as const satisfies HttpRoute;
export const exportHl7PatientSummaryRoute = {
  name: 'exportHl7PatientSummary',
  method: 'GET',
  path: '/exportHl7PatientSummary',
  scope: exportHl7,
} as const satisfies HttpRoute;
export const exportHl7EncounterRoute = {
  name: 'exportHl7Encounter',
  method: 'GET',
  path: '/exportHl7Encounter',
  scope: exportHl7,
} as const satisfies HttpRoute;
export const exportHl7NoteRoute = { name: 'exportHl7Note', method: 'GET', path: '/exportHl7Note', scope: exportHl7 } as const satisfies HttpRoute;
export const exportHl7AssessmentRoute = {
  name: 'exportHl7Assessment',
  method: 'GET',
  path: '/exportHl7Assessment',
  scope: exportHl7,
} as const satisfies HttpRoute;
export const receiveTestDataRoute = {
  name: 'receiveTestData',
  method: 'POST',
  path: '/receiveTestData',
  scope: ingestResults,
} as const satisfies HttpRoute;
export const exportHl7LabResultRoute = {
  name: 'exportHl7LabResult',
  method: 'GET',
  path: '/exportHl7LabResult',
  // an exporter's read, or a partner reading back a result it sent
  scope: [exportHl7, readOwnResults],
} as const satisfies HttpRoute;
export const receiveFormIntakeScopeRoute = {
  name: 'receiveFormIntakeScope',
  method: 'POST',
  path: '/receiveFormIntakeScope',
  scope: ingestForms,
} as const satisfies HttpRoute;
export const receiveHl7Route = { name: 'receiveHl7', method: 'POST', path: '/receiveHl7', scope: ingestHl7 } as const satisfies HttpRoute;
export const listInteropInboxRoute = { name: 'listInteropInbox', method: 'GET', path: '/interopInbox', scope: inboxRead } as const satisfies HttpRoute;
// records HL7 intake held for review (docs/write-authority.md): static `held` beside {packetId}
export const listHeldRecordsRoute = {
  name: 'listHeldRecords',
  method: 'GET',
  path: '/interopInbox/held',
  scope: inboxRead,
} as const satisfies HttpRoute;
export const getHeldRecordRoute = {
  name: 'getHeldRecord',
  method: 'GET',
  path: '/interopInbox/held/{heldId}',
  scope: inboxRead,
} as const satisfies HttpRoute;
export const routeHeldRecordRoute = {
  name: 'routeHeldRecord',
  method: 'POST',
  path: '/interopInbox/held/{heldId}/route',
  scope: inboxReview,
} as const satisfies HttpRoute;
// the partner relationships of one patient (docs/write-authority.md): reviewers see them and end them
export const listPatientRelationshipsRoute = {
  name: 'listPatientRelationships',
  method: 'GET',
  path: '/interopInbox/relationships',
  scope: inboxRead,
} as const satisfies HttpRoute;
export const endPatientRelationshipRoute = {
  name: 'endPatientRelationship',
  method: 'POST',
  path: '/interopInbox/relationships/end',
  scope: inboxReview,
} as const satisfies HttpRoute;
export const unlinkHeldRecordRoute = {
  name: 'unlinkHeldRecord',
  method: 'POST',
  path: '/interopInbox/held/{heldId}/unlink',
  scope: inboxReview,
} as const satisfies HttpRoute;
// reviewers only, like the packet search (the match index lives in the forms table)
export const searchHeldPatientsRoute = {
  name: 'searchHeldPatients',
  method: 'POST',
  path: '/interopInbox/held/{heldId}/patientSearch',
  scope: inboxReview,
} as const satisfies HttpRoute;
export const getInboxPacketRoute = {
  name: 'getInboxPacket',
  method: 'GET',
  path: '/interopInbox/{packetId}',
  scope: inboxRead,
} as const satisfies HttpRoute;
export const routeInboxPacketRoute = {
  name: 'routeInboxPacket',
  method: 'POST',
  path: '/interopInbox/{packetId}/route',
  scope: inboxReview,
} as const satisfies HttpRoute;
// reviewers only: the search shows chart demographics beyond the packet's own candidates
export const searchInboxPatientsRoute = {
  name: 'searchInboxPatients',
  method: 'POST',
  path: '/interopInbox/{packetId}/patientSearch',
  scope: inboxReview,
} as const satisfies HttpRoute;
export const getInboxCandidatesRoute = {
  name: 'getInboxCandidates',
  method: 'GET',
  path: '/interopInbox/{packetId}/candidates',
  scope: inboxRead,
} as const satisfies HttpRoute;
export const serveInboxPageRoute = {
  name: 'serveInboxPage',
  method: 'GET',
  path: '/inbox',
  scope: inboxRead,
  anonymous: true,
  staffSignIn: true,
} as const satisfies HttpRoute;
// the API reference, published with every stage (docs/openapi.json rendered by Redoc); the
// scope is never checked (anonymous), only the anonymous rate limit applies
export const serveOpenApiDocumentRoute = {
  name: 'serveOpenApiDocument',
  method: 'GET',
  path: '/openapi.json',
  scope: exportHl7,
  anonymous: true,
} as const satisfies HttpRoute;
export const serveApiReferenceRoute = {
  name: 'serveApiReference',
  method: 'GET',
  path: '/docs',
  scope: exportHl7,
  anonymous: true,
} as const satisfies HttpRoute;
// FHIR R4 read API (docs/fhir.md): ids carry their patient, `<patient>..<record>`
export const fhirMetadataRoute = {
  name: 'fhirMetadata',
  method: 'GET',
  path: '/fhir/metadata',
  scope: exportFhir,
  format: 'fhir',
  anonymous: true,
} as const satisfies HttpRoute;
export const fhirPatientReadRoute = {
  name: 'fhirPatientRead',
  method: 'GET',
  path: '/fhir/Patient/{id}',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirPatientSearchRoute = {
  name: 'fhirPatientSearch',
  method: 'GET',
  path: '/fhir/Patient',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirPatientEverythingRoute = {
  name: 'fhirPatientEverything',
  method: 'GET',
  path: '/fhir/Patient/{id}/$everything',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirEncounterReadRoute = {
  name: 'fhirEncounterRead',
  method: 'GET',
  path: '/fhir/Encounter/{id}',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirEncounterSearchRoute = {
  name: 'fhirEncounterSearch',
  method: 'GET',
  path: '/fhir/Encounter',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirDocumentReferenceReadRoute = {
  name: 'fhirDocumentReferenceRead',
  method: 'GET',
  path: '/fhir/DocumentReference/{id}',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirDocumentReferenceSearchRoute = {
  name: 'fhirDocumentReferenceSearch',
  method: 'GET',
  path: '/fhir/DocumentReference',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
// assessments and lab Observations (`<patient>..<result>..<n>`)
export const fhirObservationReadRoute = {
  name: 'fhirObservationRead',
  method: 'GET',
  path: '/fhir/Observation/{id}',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirObservationSearchRoute = {
  name: 'fhirObservationSearch',
  method: 'GET',
  path: '/fhir/Observation',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirDiagnosticReportReadRoute = {
  name: 'fhirDiagnosticReportRead',
  method: 'GET',
  path: '/fhir/DiagnosticReport/{id}',
  scope: [exportFhir, readOwnResults],
  format: 'fhir',
} as const satisfies HttpRoute;
export const fhirDiagnosticReportSearchRoute = {
  name: 'fhirDiagnosticReportSearch',
  method: 'GET',
  path: '/fhir/DiagnosticReport',
  scope: [exportFhir, readOwnResults],
  format: 'fhir',
} as const satisfies HttpRoute;
// FHIR R4 intake (docs/fhir.md "Intake"): exact POST routes, so the greedy GET /fhir/{proxy+} never takes them
export const receiveFhirBundleRoute = {
  name: 'receiveFhirBundle',
  method: 'POST',
  path: '/fhir',
  scope: ingestFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const receiveFhirDiagnosticReportRoute = {
  name: 'receiveFhirDiagnosticReport',
  method: 'POST',
  path: '/fhir/DiagnosticReport',
  scope: ingestFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
export const receiveFhirQuestionnaireResponseRoute = {
  name: 'receiveFhirQuestionnaireResponse',
  method: 'POST',
  path: '/fhir/QuestionnaireResponse',
  scope: ingestFhir,
  format: 'fhir',
} as const satisfies HttpRoute;
// the accounting of disclosures of one patient (docs/disclosures.md): the clinic's privacy reviewers (staff only)
export const listDisclosuresRoute = {
  name: 'listDisclosures',
  method: 'GET',
  path: '/disclosures',
  scope: disclosuresRead,
} as const satisfies HttpRoute;
// every other path under /fhir: 404 OperationOutcome instead of the gateway's problem+json (reads nothing)
export const fhirRouteNotFoundRoute = {
  name: 'fhirRouteNotFound',
  method: 'GET',
  path: '/fhir/{proxy+}',
  scope: exportFhir,
  format: 'fhir',
} as const satisfies HttpRoute;

const ROUTES = [
  exportHl7PatientAdtRoute,
  exportHl7PatientSummaryRoute,
  exportHl7EncounterRoute,
  exportHl7NoteRoute,
  exportHl7AssessmentRoute,
  receiveTestDataRoute,
  exportHl7LabResultRoute,
  receiveFormIntakeScopeRoute,
  receiveHl7Route,
  listInteropInboxRoute,
  listHeldRecordsRoute,
  getHeldRecordRoute,
  routeHeldRecordRoute,
  unlinkHeldRecordRoute,
  searchHeldPatientsRoute,
  listPatientRelationshipsRoute,
  endPatientRelationshipRoute,
  getInboxPacketRoute,
  routeInboxPacketRoute,
  searchInboxPatientsRoute,
  getInboxCandidatesRoute,
  serveInboxPageRoute,
  serveOpenApiDocumentRoute,
  serveApiReferenceRoute,
  fhirMetadataRoute,
  fhirPatientReadRoute,
  fhirPatientSearchRoute,
  fhirPatientEverythingRoute,
  fhirEncounterReadRoute,
  fhirEncounterSearchRoute,
  fhirDocumentReferenceReadRoute,
  fhirDocumentReferenceSearchRoute,
  fhirObservationReadRoute,
  fhirObservationSearchRoute,
  fhirDiagnosticReportReadRoute,
  fhirDiagnosticReportSearchRoute,
  receiveFhirBundleRoute,
  receiveFhirDiagnosticReportRoute,
  receiveFhirQuestionnaireResponseRoute,
  listDisclosuresRoute,
  fhirRouteNotFoundRoute,
] as const;

/** The scopes of a route, any one of which lets a caller in (one for most routes). */
export function routeScopes(route: Pick<HttpRoute, 'scope'>): readonly Scope[] {
  return typeof route.scope === 'string' ? [route.scope] : route.scope;
}

/** Whether scopes held include one of the route's. */
export function holdsRouteScope(held: readonly Scope[], route: Pick<HttpRoute, 'scope'>): boolean {
  return routeScopes(route).some((scope) => held.includes(scope));
}

/** The name of a route of the list (functions/<name>.ts). */
export type EndpointName = (typeof ROUTES)[number]['name'];
export const HttpRoutes: readonly HttpRoute[] = ROUTES;

export function endpointByRoute(method: string, path: string): HttpRoute | undefined {
  return HttpRoutes.find((e) => e.method === method && e.path === path);
}

/**
 * The methods the endpoint list defines on a path template (e.g. `/interopInbox/{packetId}`),
 * sorted: the `Allow` header of a 405 for any other method on that path, locally and in the cloud.
 */
export function allowedMethods(pathTemplate: string): string[] {
  return [...new Set(HttpRoutes.filter((e) => e.path === pathTemplate).map((e) => e.method))].sort();
}
