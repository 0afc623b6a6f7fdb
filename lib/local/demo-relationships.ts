/**
 * The demo partners' relationships with the demo chart's patients (local stack only): demo-lab and
 * demo-forms are related to every demo patient, so every documented example files and reads as
 * before; a partner made with `npm run partners` starts with none. Idempotent: a holding
 * relationship is left as it is (one ended with `partners unrelate` is made anew at the next start).
 */
import { DemoChartIds } from '../chart/demo-data';
import { relate, type PartnerPatientRelationship, type RelationshipTable } from '../relationships/relationships';

const DEMO_RELATED_PARTNERS = ['demo-lab', 'demo-forms'] as const;
const DEMO_PATIENTS = [DemoChartIds.patient1, DemoChartIds.patient2, DemoChartIds.patient3, DemoChartIds.patient4, DemoChartIds.patient5];

export function demoRelationships(now: Date): PartnerPatientRelationship[] {
  return DEMO_RELATED_PARTNERS.flatMap((partnerId) =>
    DEMO_PATIENTS.map((patientId) => ({ partnerId, patientId, purpose: 'TREAT', source: 'demo', since: now.toISOString(), createdBy: 'demo' }) as const),
  );
}

/** Answers how many were made (0 on a restart with nothing ended). */
export async function loadDemoRelationships(store: RelationshipTable, now: Date): Promise<number> {
  let made = 0;
  for (const relationship of demoRelationships(now)) if ((await relate(store, relationship, { now })).created) made++;
  return made;
}
