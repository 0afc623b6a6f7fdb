/**
 * Identity namespaces (HL7 CX-4 assigning authorities, docs/write-authority.md). The chart's own
 * authority belongs to the chart owner alone; a partner owns the authorities it was created (or
 * updated) with, each by at most one partner (claim items in the keys table, lib/keys/api-key-store.ts).
 */
import { normaliseAuthority } from '../chart/identifiers';
import { Env } from '../config/service';

/** The chart's authority when CHART_ASSIGNING_AUTHORITY is not set (the local stack and the demo chart). */
export const DEFAULT_CHART_ASSIGNING_AUTHORITY = 'DEMO-HOSP';

/** At most 64 visible ASCII characters or inner spaces, none of the HL7 v2 delimiters `| ^ ~ \ &`, not the wildcard `*`. */
const AUTHORITY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/;
const HL7_DELIMITERS = /[|^~\\&]/;

/** Why a (normalised) authority cannot be owned by a partner, or undefined when it can be named at all. */
export function invalidAssigningAuthority(authority: string): string | undefined {
  if (authority === '*') return 'an assigning authority cannot be the wildcard "*" (ownership is exclusive)';
  if (!AUTHORITY_PATTERN.test(authority) || HL7_DELIMITERS.test(authority)) {
    return `assigning authority must be 1-64 visible ASCII characters without the HL7 delimiters | ^ ~ \\ &, got "${authority}"`;
  }
  return undefined;
}

/** The chart's own assigning authority (CHART_ASSIGNING_AUTHORITY, default DEMO-HOSP), normalised. */
export function chartAssigningAuthority(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[Env.chartAssigningAuthority];
  return normaliseAuthority(configured && configured.trim() !== '' ? configured : DEFAULT_CHART_ASSIGNING_AUTHORITY);
}
