/**
 * Every change the operator tools make to a partner or a key (`npm run partners`, `npm run keys`,
 * the scheduled revokeExpiredKeys) is one record in the audit table: who ran it (`operator`),
 * when, the action, the partner and key ids, and for each changed setting its value before and
 * after. Partner settings and key metadata are not PHI. A partner's records, with those of every
 * key it has or had (partnerAuditRecords), are listed by `npm run audit -- --partner ID`, a key's
 * alone by `npm run audit -- --key KEY_ID`.
 *
 * The record is written after the change: a change whose record cannot be written is reported as a
 * failure (exit 1, "changed but not audited"), never silently kept without its record.
 */
import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import type { AuditChange, AuditRecord, AuditTrail } from '../audit/audit-trail';

/** Actions of the operator tools in the audit trail. */
export const AdminActions = {
  partnerCreate: 'admin.partner.create',
  partnerUpdate: 'admin.partner.update',
  partnerBlock: 'admin.partner.block',
  partnerUnblock: 'admin.partner.unblock',
  /** `partners claims --repair`: a claim made for its one lister, or a stale one released (one record per write) */
  claimRepair: 'admin.partner.claim_repair',
  keyCreate: 'admin.key.create',
  keyRotate: 'admin.key.rotate',
  keyRevoke: 'admin.key.revoke',
  keyMove: 'admin.key.move',
  /** `partners relate`: a relationship made, renewed or changed (purpose, until) */
  relationshipRelate: 'admin.relationship.relate',
  /** `partners unrelate`: a relationship ended */
  relationshipUnrelate: 'admin.relationship.unrelate',
} as const;
export type AdminAction = (typeof AdminActions)[keyof typeof AdminActions];

export interface AdminAuditEvent {
  action: AdminAction;
  partnerId: string;
  /** the key concerned (key actions): the record is then listed under the key */
  keyId?: string;
  /**
   * the chart patient concerned (relationship actions): the change is then recorded twice, under
   * the partner and under the patient (`npm run audit -- --patient ID` shows who was given or lost
   * the patient). An opaque chart id, never PHI.
   */
  patientId?: string;
  changes?: AuditChange[];
}

/** Records one operator change; rejects when the record could not be written. */
export type AdminAudit = (event: AdminAuditEvent) => Promise<void>;

/** Thrown when a change was made but its audit record could not be written. */
export class UnauditedChangeError extends Error {
  override readonly name = 'UnauditedChangeError';
  constructor(
    readonly event: AdminAuditEvent,
    override readonly cause: unknown,
  ) {
    super(
      `${event.action} of ${event.keyId ?? event.partnerId} was made, but its audit record could not be written (${(cause as Error)?.name ?? 'Error'}): the change stays; record it in the audit table by hand`,
    );
  }
}

/** Who runs the tool: INTEROP_OPERATOR, else the operating system's user name. */
export function operatorName(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.INTEROP_OPERATOR?.trim();
  if (named) return named;
  try {
    return `${os.userInfo().username}@${os.hostname()}`;
  } catch {
    return 'unknown';
  }
}

/** An AdminAudit writing to the audit trail as `operator`. */
export function auditTrailRecorder(trail: AuditTrail, operator: string, now: () => Date = () => new Date()): AdminAudit {
  return async (event) => {
    const resourceIds: Record<string, string> = event.keyId ? { key: event.keyId, partner: event.partnerId } : { partner: event.partnerId };
    if (event.patientId) resourceIds.patient = event.patientId;
    const record: AuditRecord = {
      action: event.action,
      resourceIds,
      at: now().toISOString(),
      requestId: `admin-${randomUUID()}`,
      partnerId: event.partnerId,
      keyId: event.keyId ?? '-',
      operator,
      ...(event.changes?.length ? { changes: event.changes } : {}),
      outcome: 'success' as const,
      status: 200,
    };
    try {
      await trail.append(record);
      // the same record under the patient (its partition key is the patient's)
      if (event.patientId) await trail.append({ ...record, patientId: event.patientId });
    } catch (error) {
      throw new UnauditedChangeError(event, error);
    }
  };
}

/** Changes only: `before` and `after` differ. */
export function changed(changes: AuditChange[]): AuditChange[] {
  return changes.filter((c) => c.before !== c.after);
}

/** What partnerAuditRecords reads: a resource's records (AuditTrailReader) and the keys of the keys table (ApiKeyStore). */
export interface PartnerAuditSources {
  forResource(name: 'partner' | 'key', id: string): Promise<AuditRecord[]>;
  listKeys(): Promise<Array<{ keyId: string; partnerId: string }>>;
}

/**
 * Every change made to a partner and to each of its keys (revoked ones included: key records are
 * kept), oldest first. A key's records are stored under the key, so they are gathered per key.
 */
export async function partnerAuditRecords(sources: PartnerAuditSources, partnerId: string): Promise<AuditRecord[]> {
  const keyIds = (await sources.listKeys()).filter((k) => k.partnerId === partnerId).map((k) => k.keyId);
  const lists = await Promise.all([sources.forResource('partner', partnerId), ...keyIds.map((id) => sources.forResource('key', id))]);
  // stable: records of the same instant keep the partner's first, then key by key
  return lists.flat().sort((a, b) => a.at.localeCompare(b.at));
}
