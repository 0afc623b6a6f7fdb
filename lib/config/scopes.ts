/**
 * The API scopes a key or a staff token can hold.
 * Part of the service facts (lib/config/service.ts re-exports it). Side-effect free at module
 * level (no calls but those marked pure, no spreads), so esbuild leaves out of a Lambda bundle whatever it does not use.
 */

export const Scopes = {
  exportHl7: 'interop:export:hl7',
  ingestResults: 'interop:ingest:results',
  ingestForms: 'interop:ingest:forms',
  /** read the interop inbox and the charts of a packet's candidates (staff; implied by inboxReview) */
  inboxRead: 'interop:inbox:read',
  inboxReview: 'interop:inbox:review',
  ingestHl7: 'interop:ingest:hl7',
  exportFhir: 'interop:export:fhir',
  /** FHIR R4 intake: DiagnosticReport (lab results), QuestionnaireResponse (forms), transaction/batch Bundles */
  ingestFhir: 'interop:ingest:fhir',
  /** read back the lab results this partner sent, and only those (no export scope; docs/write-authority.md) */
  readOwnResults: 'interop:read:own-results',
  /** the accounting of disclosures of a patient (the clinic's privacy reviewers; staff only) */
  disclosuresRead: 'interop:disclosures:read',
} as const;
export type Scope = (typeof Scopes)[keyof typeof Scopes];
export const ALL_SCOPES: readonly Scope[] = /* @__PURE__ */ Object.values(Scopes);
/**
 * Scopes for the clinic's own staff only: the inbox shows every partner's packets decrypted. Keys
 * holding one are issued only to `internal` partners (`npm run keys` refuses otherwise) and the
 * access decision refuses them for any other partner (403), even if a record was written by hand.
 */
export const STAFF_ONLY_SCOPES: readonly Scope[] = [Scopes.inboxRead, Scopes.inboxReview, Scopes.disclosuresRead];
