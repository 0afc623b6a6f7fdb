/**
 * The CapabilityStatement of GET /fhir/metadata, derived from the FHIR routes of the endpoint list
 * (handed in as paths), so it cannot claim a route that does not exist or miss one that does:
 *   /fhir/<Type>/{id}                 -> read
 *   /fhir/<Type>                      -> search-type, with the type's parameters of {@link SEARCH_PARAMETERS}
 *   /fhir/<Type>/{id}/$<operation>    -> an instance operation
 *   /fhir/{proxy+}                    -> nothing (the 404 OperationOutcome of every other path)
 */
import type { CapabilityStatement, CapabilityStatementRestResource, CapabilityStatementRestResourceSearchParam } from '@medplum/fhirtypes';

export const FHIR_VERSION = '4.0.1';
export const FHIR_JSON = 'application/fhir+json';
/** when this statement's content last changed (CapabilityStatement.date) */
export const CAPABILITY_DATE = '2026-11-24';

const SP = 'http://hl7.org/fhir/SearchParameter/';
const PATIENT: CapabilityStatementRestResourceSearchParam = {
  name: 'patient',
  definition: `${SP}clinical-patient`,
  type: 'reference',
  documentation: 'Required. The patient whose records are returned: `<id>` or `Patient/<id>`. An id that is no chart patient has no matches.',
};
const PAGING: CapabilityStatementRestResourceSearchParam[] = [
  { name: '_count', type: 'number', documentation: 'Page size, 1 to 200 (default 20).' },
  { name: '_page_token', type: 'string', documentation: 'Opaque token of the next page, as given in the `next` link.' },
];
const DATE_DOC =
  'effective[x] (else issued): `[prefix]YYYY[-MM[-DD[Thh:mm[:ss][Z|±hh:mm]]]]`, prefixes eq (default), ne, gt, lt, ge, le, sa, eb; each value is the range its precision covers, without an offset in UTC; repeat for AND (`date=ge2024-01-01&date=lt2025-01-01`).';
const TOKEN_DOC = 'a token: `code`, `system|code`, `|code` or `system|`; a comma-separated list is OR.';

/** The search parameters of each type's search-type interaction (what functions/fhir<Type>Search.ts accepts). */
export const SEARCH_PARAMETERS: Record<string, CapabilityStatementRestResourceSearchParam[]> = {
  Patient: [
    {
      name: 'identifier',
      definition: `${SP}Patient-identifier`,
      type: 'token',
      documentation:
        'The MRN as `system|value`, the system as Patient.identifier writes it (`urn:interop:mrn:<assigning authority>`); MRN and authority are compared normalised (case, white space). The system is required.',
    },
    { name: '_id', definition: `${SP}Resource-id`, type: 'token', documentation: 'One to ten Patient ids, comma-separated (OR).' },
    { name: '_count', type: 'number', documentation: 'Page size, 1 to 200 (default 20).' },
  ],
  Encounter: [PATIENT, ...PAGING],
  DocumentReference: [PATIENT, ...PAGING],
  Observation: [
    PATIENT,
    {
      name: 'category',
      definition: `${SP}Observation-category`,
      type: 'token',
      documentation: `\`laboratory\` (lab results) or \`survey\` (assessments), system http://terminology.hl7.org/CodeSystem/observation-category; ${TOKEN_DOC}`,
    },
    { name: 'code', definition: `${SP}clinical-code`, type: 'token', documentation: `Observation.code (e.g. \`http://loinc.org|2345-7\`); ${TOKEN_DOC}` },
    { name: 'date', definition: `${SP}clinical-date`, type: 'date', documentation: DATE_DOC },
    ...PAGING,
  ],
  DiagnosticReport: [
    PATIENT,
    {
      name: 'category',
      definition: `${SP}DiagnosticReport-category`,
      type: 'token',
      documentation: `\`LAB\` (system http://terminology.hl7.org/CodeSystem/v2-0074): every report here is one; ${TOKEN_DOC}`,
    },
    { name: 'date', definition: `${SP}clinical-date`, type: 'date', documentation: DATE_DOC },
    ...PAGING,
  ],
};

const TRANSACTION_DOC =
  'POST /fhir with a transaction Bundle of POST entries (DiagnosticReport, QuestionnaireResponse and the Patient, Observation, Specimen, ServiceRequest they reference): all or nothing; scope interop:ingest:fhir.';
/** what a create (FHIR intake) does with each resource type */
const CREATE_DOC: Record<string, string> = {
  DiagnosticReport:
    'FHIR intake (scope interop:ingest:fhir): a US Core lab report with its Observations becomes a lab result, filed as HL7 ORU results are (held for review when the patient is not resolved).',
  QuestionnaireResponse:
    'FHIR intake (scope interop:ingest:fhir): a completed form becomes a form packet (matching, interop inbox), as POST /receiveFormIntakeScope.',
};

const OPERATIONS: Record<string, string> = { everything: 'http://hl7.org/fhir/OperationDefinition/Patient-everything' };

/** A FHIR route of the endpoint list: its path, and its method (GET when only a path is given). */
export type FhirRoute = string | { method: 'GET' | 'POST'; path: string };

/**
 * The CapabilityStatement of the FHIR routes: GET `/fhir/<Type>/{id}` read, GET `/fhir/<Type>` search-type,
 * `$operations`; POST `/fhir/<Type>` create (FHIR intake), POST `/fhir` transaction and batch.
 */
export function capabilityStatement(fhirRoutes: readonly FhirRoute[], baseUrl: string): CapabilityStatement {
  const byType = new Map<string, CapabilityStatementRestResource>();
  const resourceFor = (type: string) => {
    let r = byType.get(type);
    if (!r) {
      r = { type: type as CapabilityStatementRestResource['type'], interaction: [] };
      byType.set(type, r);
    }
    return r;
  };
  const systemInteractions: Array<{ code: 'transaction' | 'batch'; documentation: string }> = [];
  for (const route of fhirRoutes) {
    const { method, path } = typeof route === 'string' ? { method: 'GET', path: route } : route;
    const parts = path.split('/').filter((p) => p !== '');
    if (method === 'POST') {
      if (parts.length === 1 && parts[0] === 'fhir')
        systemInteractions.push(
          { code: 'transaction', documentation: TRANSACTION_DOC },
          { code: 'batch', documentation: 'POST /fhir with a batch Bundle of POST entries: each entry answered on its own (entry.response).' },
        );
      else if (parts.length === 2 && parts[0] === 'fhir' && !parts[1]!.startsWith('{'))
        resourceFor(parts[1]!).interaction!.push({ code: 'create', documentation: CREATE_DOC[parts[1]!] ?? 'FHIR intake (docs/fhir.md).' });
      continue;
    }
    if (parts[0] !== 'fhir' || !parts[1] || parts[1] === 'metadata' || parts[1].startsWith('{')) continue;
    const resource = resourceFor(parts[1]);
    if (parts.length === 3) {
      resource.interaction!.push({ code: 'read' });
    } else if (parts.length === 2) {
      resource.interaction!.push({ code: 'search-type' });
      resource.searchParam = SEARCH_PARAMETERS[parts[1]] ?? [PATIENT, ...PAGING];
    } else if (parts.length === 4 && parts[3]!.startsWith('$')) {
      const name = parts[3]!.slice(1);
      resource.operation = [...(resource.operation ?? []), { name, definition: OPERATIONS[name] ?? `${baseUrl}/OperationDefinition/${name}` }];
    }
  }
  for (const r of byType.values()) {
    if (r.interaction!.length === 0) delete r.interaction;
  }
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: CAPABILITY_DATE,
    publisher: 'Clinical interoperability service',
    kind: 'instance',
    implementation: { description: 'FHIR R4 export of the chart and lab results, and FHIR intake of lab results and forms', url: baseUrl },
    fhirVersion: FHIR_VERSION,
    format: [FHIR_JSON, 'json'],
    rest: [
      {
        mode: 'server',
        documentation:
          'Every read and search needs an x-api-key with the scope interop:export:fhir, every create, transaction and batch (FHIR intake) the scope interop:ingest:fhir; this one needs none. Record ids carry their patient: `<patient>..<record>`; a lab Observation is `<patient>..<result>..<n>` (see docs/fhir.md). An unsupported search parameter is a 400 and any other path under /fhir a 404, both as OperationOutcome.',
        security: { cors: false, description: 'API key in the x-api-key header; rate limited per key (x-ratelimit-* headers).' },
        resource: [...byType.values()],
        ...(systemInteractions.length > 0 ? { interaction: systemInteractions } : {}),
      },
    ],
  };
}
