/**
 * The operator CLIs as a test runs them: `npm run partners|keys -- <argv>` in-process (partnersCli /
 * keysCli, the code the scripts run), against the running local stack as the scripts target it.
 */
import { keysCli } from '../../lib/admin/keys-cli';
import { partnersCli } from '../../lib/admin/partners-cli';
import { resolveTarget } from '../../lib/admin/target';
import { useLocalStackEnvironment } from '../../lib/local/endpoints-file';

export interface OperatorRun {
  code: number;
  out: string;
  err: string;
}

export async function operator(tool: 'partners' | 'keys', argv: string[]): Promise<OperatorRun> {
  let out = '';
  let err = '';
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
  const deps = { resolveTarget: (stage: string | undefined) => resolveTarget(stage, useLocalStackEnvironment) };
  const code = await (tool === 'partners' ? partnersCli : keysCli)(argv, io, deps);
  return { code, out, err };
}

/** `keys create --partner <partner> --scopes <scopes> --json`: the secret printed once, and the key id. */
export async function createPartnerKey(partner: string, scopes: readonly string[], label?: string): Promise<{ secret: string; keyId: string }> {
  const run = await operator('keys', ['create', '--partner', partner, '--scopes', scopes.join(','), ...(label ? ['--label', label] : []), '--json']);
  if (run.code !== 0) throw new Error(`keys create failed (${run.code}): ${run.err}`);
  return JSON.parse(run.out) as { secret: string; keyId: string };
}

/** `partners relate <partner> <patient>`: the relationship a partner files and reads under (docs/write-authority.md). */
export async function relatePartner(partner: string, patientId: string): Promise<void> {
  const run = await operator('partners', ['relate', partner, patientId]);
  if (run.code !== 0) throw new Error(`partners relate failed (${run.code}): ${run.err}`);
}
