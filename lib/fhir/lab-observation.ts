/**
 * Lab Observations as resources of their own (GET /fhir/Observation/{id}, Observation?category=laboratory).
 * The DiagnosticReport of a lab result (lab-report.ts) carries its Observations contained, as
 * `result-<n>`; the same Observations are served on their own, taken from that report so both
 * always say the same thing:
 *
 *   id        `<report id>..<n>`: the report's logical id (`<patient>..<result>`) and the test's
 *             position `n` (1-based, as `result-<n>`), e.g. `demo-patient-1..lr.5F3f2a…..2`
 *   contained the report's contained resources the Observation refers to (`#specimen`), so its local
 *             references still resolve; everything else as in the report.
 *
 * Pure: no I/O.
 */
import type { DiagnosticReport, Observation, Resource } from '@medplum/fhirtypes';
import { decodeLogicalId, logicalId } from './logical-id';

const CONTAINED_ID = /^result-([1-9]\d{0,3})$/;
const SEPARATOR = '..';

/** The logical id of the `n`-th (1-based) Observation of a lab result. */
export function labObservationId(patientId: string, resultId: string, n: number): string {
  return `${logicalId(patientId, resultId)}${SEPARATOR}${n}`;
}

/**
 * Patient, result and position a lab Observation id names; undefined for any other id (an
 * assessment's `<patient>..<assessment>` included). Only the id this service writes is accepted.
 */
export function labObservationIdsOf(id: string): { patientId: string; resultId: string; n: number } | undefined {
  const decoded = decodeLogicalId(id);
  if (!decoded.ok || decoded.parts.length !== 3) return undefined;
  const [patientId, resultId, position] = decoded.parts as [string, string, string];
  if (!/^[1-9]\d{0,3}$/.test(position)) return undefined;
  const n = Number(position);
  try {
    return labObservationId(patientId, resultId, n) === id ? { patientId, resultId, n } : undefined;
  } catch {
    return undefined;
  }
}

/** Local references (`#id`) anywhere in a value. */
function localReferences(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => localReferences(v, found));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'reference' && typeof v === 'string' && v.startsWith('#') && v.length > 1) found.add(v.slice(1));
      else localReferences(v, found);
    }
  }
  return found;
}

/**
 * The report's Observations as resources of their own, in the report's order, each with its
 * position `n`. Observations the report does not contain as `result-<n>` are left out.
 */
export function labObservations(report: Pick<DiagnosticReport, 'id' | 'contained'>): Array<{ n: number; observation: Observation }> {
  const contained = (report.contained ?? []) as Resource[];
  const byId = new Map(contained.filter((r) => r.id !== undefined).map((r) => [r.id!, r]));
  const out: Array<{ n: number; observation: Observation }> = [];
  for (const resource of contained) {
    if (resource.resourceType !== 'Observation') continue;
    const position = CONTAINED_ID.exec(resource.id ?? '');
    if (!position || !report.id) continue;
    const n = Number(position[1]);
    const { contained: _own, id: _id, resourceType: _type, ...rest } = resource as Observation;
    const refs = [...localReferences(rest)].map((ref) => byId.get(ref)).filter((r): r is Resource => r !== undefined && r.resourceType !== 'Observation');
    out.push({
      n,
      observation: { resourceType: 'Observation', id: `${report.id}${SEPARATOR}${n}`, ...(refs.length ? { contained: refs } : {}), ...rest } as Observation,
    });
  }
  return out;
}
