/**
 * SSM parameters a deployed stack writes for the operator CLIs (`npm run keys`, `npm run
 * partners`), so the CLIs find a stage's resources from its name alone. Written by infra/, read
 * by lib/admin/; one place for the names.
 */
import type { PartnerTier } from '../keys/api-key';

export const stagePrefix = (stage: string): string => `interop-${stage}`;

/** `/interop-<stage>/usage-plans/<tier>`: the id of the tier's API Gateway usage plan. */
export function usagePlanParameterName(prefix: string, tier: PartnerTier): string {
  return `/${prefix}/usage-plans/${tier}`;
}
