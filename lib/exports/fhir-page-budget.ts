/**
 * The byte budget of a FHIR searchset page (issue 27 leftovers): Lambda answers at most 6 MB, and one
 * lab result's DiagnosticReport can hold several MiB (a summary is up to ~4 MiB, lib/results), so a
 * page that only counted entries could pass the limit and fail as a 5xx at the gateway. Every search
 * and $everything stops a page before the entry that would take its JSON past
 * {@link FHIR_PAGE_MAX_BYTES} (the HL7 single-result export's cap) and gives a `next` link that
 * continues with that entry: a page is shorter than `_count`, nothing is skipped. The first entry of
 * a page is always given (else paging could never move past it); one lab result fits the budget.
 */
import type { Resource } from '@medplum/fhirtypes';

/** The most a FHIR Bundle answered by a search or $everything holds, in bytes of its JSON (below Lambda's 6 MB). */
export const FHIR_PAGE_MAX_BYTES = 5_000_000;

/** Kept for the Bundle around the entries: meta, timestamp, the self and next links (query and page token). */
export const BUNDLE_ENVELOPE_BYTES = 32 * 1024;

export class PageBudget {
  private used = BUNDLE_ENVELOPE_BYTES;
  private taken = 0;

  /** `baseUrl` the FHIR base of the entries' fullUrl; `maxBytes` the budget (default {@link FHIR_PAGE_MAX_BYTES}). */
  constructor(
    private readonly baseUrl: string,
    private readonly maxBytes: number = FHIR_PAGE_MAX_BYTES,
  ) {}

  /** Counts the resource in and answers true when it fits (the first of a page always does); false: the page ends before it. */
  take(resource: Resource): boolean {
    const entry = { fullUrl: `${this.baseUrl}/${resource.resourceType}/${resource.id}`, resource, search: { mode: 'match' } };
    // the entry's JSON and the comma before it
    const bytes = Buffer.byteLength(JSON.stringify(entry), 'utf8') + 1;
    if (this.taken > 0 && this.used + bytes > this.maxBytes) return false;
    this.used += bytes;
    this.taken += 1;
    return true;
  }
}
