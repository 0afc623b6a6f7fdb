/**
 * Page tokens of the FHIR searches: where the next page continues, never an offset, so a page is one
 * bounded Query per source whatever the page number. base64url of a small JSON object:
 *   $everything          { k: 'e', c?: <chart timeline position>, l?: <lab result position> }
 *   HL7 patient summary  { k: 'h', c?: <chart timeline position>, l?: <lab result position> } (its `cursor`)
 *   Encounter/DocRef     { k: 's', a: <last record id> }
 *   DiagnosticReport     { k: 'l', l: <lab result position> }
 *   Observation          { k: 'o', l?: <lab result position>, n?: <matching Observations of the next
 *                        result already given>, p?: 'a' (the assessments, after the lab results), a?: <last assessment id> }
 * A token only moves the start inside the partition of the patient named in the same request, so an
 * edited token can reorder or skip that patient's records but never reach another patient's.
 * Anything that does not decode to one of these shapes is refused (400).
 */

export type EverythingToken = { k: 'e'; c?: string; l?: string };
export type SummaryToken = { k: 'h'; c?: string; l?: string };
export type SearchToken = { k: 's'; a: string };
export type LabToken = { k: 'l'; l: string };
export type ObservationToken = { k: 'o'; l?: string; n?: string; p?: 'a'; a?: string };
export type PageToken = EverythingToken | SummaryToken | SearchToken | LabToken | ObservationToken;

const TIMELINE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#(encounter|note|assessment)#[A-Za-z0-9._:-]{1,128}$/;
const LAB_POSITION = /^[0-9A-Za-z:.#_-]{1,200}$/;
const CHART_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const COUNT = /^[1-9]\d{0,3}$/;
const PHASE = /^a$/;

export function encodePageToken(token: PageToken): string {
  return Buffer.from(JSON.stringify(token), 'utf8').toString('base64url');
}

export function decodePageToken<K extends PageToken['k']>(text: string, kind: K): Extract<PageToken, { k: K }> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const t = value as Record<string, unknown>;
  if (t.k !== kind) return undefined;
  const keys = Object.keys(t);
  const ok = (name: string, pattern: RegExp, required: boolean) =>
    t[name] === undefined ? !required : typeof t[name] === 'string' && pattern.test(t[name] as string);
  switch (kind) {
    case 'e':
    case 'h':
      return keys.every((k) => ['k', 'c', 'l'].includes(k)) && ok('c', TIMELINE, false) && ok('l', LAB_POSITION, false)
        ? (t as Extract<PageToken, { k: K }>)
        : undefined;
    case 's':
      return keys.every((k) => ['k', 'a'].includes(k)) && ok('a', CHART_ID, true) ? (t as Extract<PageToken, { k: K }>) : undefined;
    case 'l':
      return keys.every((k) => ['k', 'l'].includes(k)) && ok('l', LAB_POSITION, true) ? (t as Extract<PageToken, { k: K }>) : undefined;
    case 'o':
      return keys.every((k) => ['k', 'l', 'n', 'p', 'a'].includes(k)) &&
        ok('l', LAB_POSITION, false) &&
        ok('n', COUNT, false) &&
        ok('p', PHASE, false) &&
        ok('a', CHART_ID, false) &&
        (t.p === 'a' ? t.l === undefined && t.n === undefined : t.a === undefined)
        ? (t as Extract<PageToken, { k: K }>)
        : undefined;
    default:
      return undefined;
  }
}
