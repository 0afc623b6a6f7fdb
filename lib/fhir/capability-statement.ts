/**
 * The CapabilityStatement of GET /fhir/metadata, derived from the FHIR routes of the endpoint list
 * (handed in as paths), so it cannot claim a route that does not exist or miss one that does:
 *   /fhir/<Type>/{id}                 -> read
 *   /fhir/<Type>                      -> search-type (patient, _count, _page_token)
 *   /fhir/<Type>/{id}/$<operation>    -> an instance operation
 */
import type { CapabilityStatement, CapabilityStatementRestResource } from '@medplum/fhirtypes';

export const FHIR_VERSION = '4.0.1';
export const FHIR_JSON = 'application/fhir+json';
/** when this statement's content last changed (CapabilityStatement.date) */
export const CAPABILITY_DATE = '2026-11-23';

const OPERATIONS: Record<string, string> = { everything: 'http://hl7.org/fhir/OperationDefinition/Patient-everything' };

export function capabilityStatement(fhirPaths: readonly string[], baseUrl: string): CapabilityStatement {
  const byType = new Map<string, CapabilityStatementRestResource>();
  const resourceFor = (type: string) => {
    let r = byType.get(type);
    if (!r) {
      r = { type: type as CapabilityStatementRestResource['type'], interaction: [] };
      byType.set(type, r);
    }
    return r;
  };
  for (const path of fhirPaths) {
    const parts = path.split('/').filter((p) => p !== '');
    if (parts[0] !== 'fhir' || !parts[1] || parts[1] === 'metadata') continue;
    const resource = resourceFor(parts[1]);
    if (parts.length === 3) {
      resource.interaction!.push({ code: 'read' });
    } else if (parts.length === 2) {
      resource.interaction!.push({ code: 'search-type' });
      resource.searchParam = [
        { name: 'patient', type: 'reference', documentation: 'Required. The patient whose records are returned: `<id>` or `Patient/<id>`.' },
        { name: '_count', type: 'number', documentation: 'Page size, 1 to 200 (default 20).' },
        { name: '_page_token', type: 'string', documentation: 'Opaque token of the next page, as given in the `next` link.' },
      ];
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
    implementation: { description: 'Read-only FHIR R4 export of the chart and lab results', url: baseUrl },
    fhirVersion: FHIR_VERSION,
    format: [FHIR_JSON, 'json'],
    rest: [
      {
        mode: 'server',
        documentation:
          'Every request but this one needs an x-api-key with the scope interop:export:fhir. Record ids carry their patient: `<patient>..<record>` (see the README).',
        security: { cors: false, description: 'API key in the x-api-key header; rate limited per key (x-ratelimit-* headers).' },
        resource: [...byType.values()],
      },
    ],
  };
}
