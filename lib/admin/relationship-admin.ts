/**
 * Partner-patient relationships for the operator CLI (`npm run partners -- relate | unrelate |
 * relations`): the record that lets a partner reach a chart patient (lib/relationships,
 * docs/write-authority.md "Relationships"). A relationship is made only between a partner the keys
 * table knows and a patient the chart holds; every change is one audit record under the partner
 * and one under the patient (lib/admin/admin-audit.ts: ids, purpose and dates only, never PHI).
 */
import type { ChartItemReader } from '../chart/chart-reader';
import type { ApiKeyStore } from '../keys/api-key-store';
import {
  partnerRelationships,
  patientRelationships,
  readRelationship,
  relate,
  relationshipHolds,
  unrelate,
  type PartnerPatientRelationship,
  type PurposeOfUse,
  type RelationshipSource,
  type RelationshipTable,
} from '../relationships/relationships';
import { AdminActions, changed, type AdminAudit } from './admin-audit';
import { AdminError } from './key-admin';

export interface RelateRequest {
  partnerId: string;
  patientId: string;
  /** absent: TREAT for a new relationship, the stored one's for a holding one */
  purpose?: PurposeOfUse;
  /** ISO 8601 instant it holds until (absent: until ended; a holding one keeps its own) */
  until?: string;
}

/** What `relate` did: made one (`created`), changed a holding one's purpose or until (`updated`), or found it as asked (`unchanged`). */
export type RelateOutcome = 'created' | 'updated' | 'unchanged';

/** A relationship as the CLI and the staff endpoint show it: the record and whether it lets its partner in now. */
export type ShownRelationship = PartnerPatientRelationship & { holds: boolean };

export const shownRelationship = (relationship: PartnerPatientRelationship, now: Date): ShownRelationship => ({
  ...relationship,
  holds: relationshipHolds(relationship, now),
});

/** The fields of a relationship an audit record keeps, before and after (ids, codes and dates: no PHI). */
function relationshipFields(r: PartnerPatientRelationship | undefined): Record<string, string> {
  return {
    purpose: r?.purpose ?? '',
    source: r?.source ?? '',
    since: r?.since ?? '',
    until: r?.until ?? '',
    createdBy: r?.createdBy ?? '',
    endedAt: r?.endedAt ?? '',
    endedBy: r?.endedBy ?? '',
  };
}

function relationshipChanges(before: PartnerPatientRelationship | undefined, after: PartnerPatientRelationship) {
  const b = relationshipFields(before);
  const a = relationshipFields(after);
  return changed(Object.keys(a).map((field) => ({ field, before: b[field]!, after: a[field]! })));
}

export class RelationshipAdmin {
  constructor(
    private readonly partners: Pick<ApiKeyStore, 'getPartner'>,
    private readonly chart: RelationshipTable & { patients: Pick<ChartItemReader, 'getPatient'> },
    /** who runs the command (lib/admin/admin-audit.ts operatorName): the relationship's `createdBy` / `endedBy` */
    private readonly operator: string,
    private readonly audit?: AdminAudit,
  ) {}

  /** Refuses (AdminError, nothing written) a partner the keys table does not know or a patient the chart does not hold. */
  private async checkParties(partnerId: string, patientId: string): Promise<void> {
    if (!(await this.partners.getPartner(partnerId))) throw new AdminError(`unknown partner ${partnerId}; nothing changed`);
    if (!(await this.chart.patients.getPatient(patientId)))
      throw new AdminError(`no chart patient ${patientId} (relationships name patients the chart holds: import the patient first); nothing changed`);
  }

  /**
   * Makes the relationship (source `operator`), or changes the purpose or until of a holding one
   * (its since, source and maker are kept: the audit trail names who changed it). An ended or
   * expired one is made anew.
   */
  async relate(
    request: RelateRequest,
    now: Date,
    source: RelationshipSource = 'operator',
  ): Promise<{ outcome: RelateOutcome; relationship: PartnerPatientRelationship }> {
    await this.checkParties(request.partnerId, request.patientId);
    const existing = await readRelationship(this.chart, request.partnerId, request.patientId);
    const holding = existing && relationshipHolds(existing, now) ? existing : undefined;
    const wanted: PartnerPatientRelationship = holding
      ? {
          ...holding,
          purpose: request.purpose ?? holding.purpose,
          ...(request.until !== undefined ? { until: request.until } : {}),
        }
      : {
          partnerId: request.partnerId,
          patientId: request.patientId,
          purpose: request.purpose ?? 'TREAT',
          source,
          since: now.toISOString(),
          ...(request.until !== undefined ? { until: request.until } : {}),
          createdBy: this.operator,
        };
    if (holding && !relationshipChanges(holding, wanted).length) return { outcome: 'unchanged', relationship: holding };
    const { relationship } = await relate(this.chart, wanted, { replace: true, now });
    await this.record(request.partnerId, request.patientId, relationshipChanges(holding, relationship));
    return { outcome: holding ? 'updated' : 'created', relationship };
  }

  /** Ends the holding relationship (kept, with endedAt / endedBy). None holding: AdminError, nothing changed. */
  async unrelate(partnerId: string, patientId: string, now: Date): Promise<PartnerPatientRelationship> {
    const existing = await readRelationship(this.chart, partnerId, patientId);
    if (!existing || !relationshipHolds(existing, now)) {
      if (!(await this.partners.getPartner(partnerId))) throw new AdminError(`unknown partner ${partnerId}; nothing changed`);
      throw new AdminError(`partner ${partnerId} has no holding relationship with patient ${patientId}; nothing changed`);
    }
    const ended = await unrelate(this.chart, partnerId, patientId, this.operator, now);
    if (!ended) throw new AdminError(`the relationship of partner ${partnerId} with patient ${patientId} was ended meanwhile; nothing changed`);
    await this.record(partnerId, patientId, relationshipChanges(existing, ended), AdminActions.relationshipUnrelate);
    return ended;
  }

  /** Every relationship of the partner (ended ones too), by patient id. Unknown partner: AdminError. */
  async ofPartner(partnerId: string): Promise<PartnerPatientRelationship[]> {
    if (!(await this.partners.getPartner(partnerId))) throw new AdminError(`unknown partner ${partnerId}`);
    return partnerRelationships(this.chart, partnerId);
  }

  /** Every relationship of the patient (ended ones too), by partner id. */
  ofPatient(patientId: string): Promise<PartnerPatientRelationship[]> {
    return patientRelationships(this.chart, patientId);
  }

  private async record(
    partnerId: string,
    patientId: string,
    changes: ReturnType<typeof relationshipChanges>,
    action: (typeof AdminActions)['relationshipRelate' | 'relationshipUnrelate'] = AdminActions.relationshipRelate,
  ): Promise<void> {
    if (this.audit) await this.audit({ action, partnerId, patientId, changes });
  }
}
