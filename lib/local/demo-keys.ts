/**
 * Demo partners and API keys for the LOCAL stack only (never deployed). The secrets are public
 * by design; they are documented in the README.
 */
import { ALL_SCOPES, Scopes, type Scope } from '../config/service';
import { hashApiKey, keyIdFromHash, type PartnerRecord } from '../keys/api-key';
import type { ApiKeyStore } from '../keys/api-key-store';
import { IdentityClaimStore, identityClaimKeys, WILDCARD_ID } from '../keys/identity-claims';

export const DEMO_PARTNERS: PartnerRecord[] = [
  {
    partnerId: 'demo-ehr',
    name: 'Demo EHR',
    policy: 'active',
    // the organisation's own downstream EHR: every chart patient (documented in the README)
    patientAccess: 'all',
    rateLimit: 1000,
    rateWindowSeconds: 60,
    allowedSenderIds: [],
    assigningAuthorities: ['DEMO-EHR'],
    receivingApplication: 'DEMO-EHR',
    receivingFacility: 'DEMO-CLINIC',
  },
  {
    partnerId: 'demo-lab',
    name: 'Demo Lab',
    policy: 'active',
    patientAccess: 'related',
    rateLimit: 1000,
    rateWindowSeconds: 60,
    allowedSenderIds: ['demo-lab', 'DEMO-LAB-LIS'],
    allowedFormSourceIds: ['demo-lab-forms'],
    assigningAuthorities: ['DEMO-LAB'],
    receivingApplication: 'DEMO-LIS',
    receivingFacility: 'DEMO-LAB',
  },
  {
    partnerId: 'demo-ehr-oru',
    name: 'Demo EHR taking single ORU messages',
    policy: 'active',
    patientAccess: 'all',
    rateLimit: 1000,
    rateWindowSeconds: 60,
    allowedSenderIds: [],
    receivingApplication: 'DEMO-ORU-EHR',
    receivingFacility: 'DEMO-ORU-CLINIC',
    hl7Profile: { encounterStyle: 'oru', summaryStyle: 'oru', noteDocumentType: 'PR', sendingApplication: 'INTEROP-ORU', sendingFacility: 'INTEROP-ORU-FAC' },
  },
  {
    partnerId: 'demo-forms',
    name: 'Demo Forms',
    policy: 'active',
    patientAccess: 'related',
    rateLimit: 1000,
    rateWindowSeconds: 60,
    allowedSenderIds: [],
    allowedFormSourceIds: ['demo-form-tool', 'demo-forms'],
  },
  {
    partnerId: 'demo-staff',
    name: 'Demo Interop Staff',
    policy: 'active',
    rateLimit: 1000,
    rateWindowSeconds: 60,
    allowedSenderIds: [],
    kind: 'internal',
    patientAccess: 'all',
  },
  // no sender ids: a wildcard ('*', as stored by stacks seeded before sender id claims) would cover every partner's
  {
    partnerId: 'demo-blocked',
    name: 'Demo Blocked Partner',
    policy: 'blocked',
    rateLimit: 1000,
    rateWindowSeconds: 60,
    allowedSenderIds: [],
    patientAccess: 'related',
  },
];

export interface DemoKey {
  secret: string;
  partnerId: string;
  scopes: Scope[];
  status: 'active' | 'revoked';
  rateLimit?: number;
  rateWindowSeconds?: number;
}

const coreScopes: Scope[] = [Scopes.exportHl7, Scopes.ingestResults, Scopes.ingestForms, Scopes.ingestHl7, Scopes.exportFhir, Scopes.ingestFhir];

export const DEMO_KEYS: DemoKey[] = [
  { secret: 'demo-export-key', partnerId: 'demo-ehr', scopes: [Scopes.exportHl7], status: 'active' },
  { secret: 'demo-export-oru-key', partnerId: 'demo-ehr-oru', scopes: [Scopes.exportHl7], status: 'active' },
  { secret: 'demo-results-key', partnerId: 'demo-lab', scopes: [Scopes.ingestResults], status: 'active' },
  { secret: 'demo-hl7-key', partnerId: 'demo-lab', scopes: [Scopes.ingestHl7], status: 'active' },
  { secret: 'demo-forms-key', partnerId: 'demo-forms', scopes: [Scopes.ingestForms], status: 'active' },
  { secret: 'demo-all-key', partnerId: 'demo-lab', scopes: coreScopes, status: 'active' },
  { secret: 'demo-revoked-key', partnerId: 'demo-lab', scopes: [...ALL_SCOPES], status: 'revoked' },
  { secret: 'demo-blocked-key', partnerId: 'demo-blocked', scopes: [...ALL_SCOPES], status: 'active' },
  { secret: 'demo-limited-key', partnerId: 'demo-ehr', scopes: [Scopes.exportHl7], status: 'active', rateLimit: 5, rateWindowSeconds: 60 },
  { secret: 'demo-inbox-key', partnerId: 'demo-staff', scopes: [Scopes.inboxReview], status: 'active' },
  // the clinic's privacy office: the accounting of disclosures (GET /disclosures, docs/disclosures.md)
  { secret: 'demo-privacy-key', partnerId: 'demo-staff', scopes: [Scopes.disclosuresRead], status: 'active' },
  { secret: 'demo-fhir-key', partnerId: 'demo-ehr', scopes: [Scopes.exportFhir], status: 'active' },
  // FHIR R4 intake for the demo lab (its senders demo-lab / DEMO-LAB-LIS, authority DEMO-LAB, form source demo-lab-forms)
  { secret: 'demo-fhir-intake-key', partnerId: 'demo-lab', scopes: [Scopes.ingestFhir], status: 'active' },
];

/**
 * Loads demo partners, their claims (assigning authorities, sender ids, form sources) and keys that
 * are missing; never overwrites (a revoked key stays revoked, an id another partner was given stays
 * its: `npm run partners -- claims` shows it shared). The claims follow the stored record
 * (`partners update` may have changed it), so a `.local/` seeded before sender id and form source
 * claims gets them at the next start; a demo partner stored with the wildcard sender id the seed
 * no longer lists gets the seed's list.
 */
export async function loadDemoKeys(store: ApiKeyStore, now: Date): Promise<{ partners: number; keys: number }> {
  let partners = 0;
  let keys = 0;
  const claims = new IdentityClaimStore(store.db, store.table);
  for (const partner of DEMO_PARTNERS) {
    const created = await store.putPartner(partner, { ifMissing: true });
    if (created) partners++;
    const stored = created ? partner : await store.getPartner(partner.partnerId);
    // a demo partner stored before partners had authorities: the demo's, where no one else owns them
    const migrate = !created && stored !== undefined && stored.assigningAuthorities === undefined;
    // a demo partner stored before relationships: the seed's patient access
    if (!created && stored !== undefined && stored.patientAccess === undefined && partner.patientAccess !== undefined)
      await store.updatePartner(partner.partnerId, { patientAccess: partner.patientAccess });
    const authorities = migrate ? (partner.assigningAuthorities ?? []) : (stored?.assigningAuthorities ?? []);
    const claimed: string[] = [];
    for (const authority of authorities) if ((await claims.claim('authority', authority, partner.partnerId, now)).claimed) claimed.push(authority);
    if (migrate && claimed.length) await store.updatePartner(partner.partnerId, { assigningAuthorities: claimed });
    let senderIds = stored?.allowedSenderIds ?? [];
    if (!created && senderIds.includes(WILDCARD_ID) && !partner.allowedSenderIds.includes(WILDCARD_ID)) {
      senderIds = partner.allowedSenderIds;
      await store.updatePartner(partner.partnerId, { allowedSenderIds: senderIds });
    }
    for (const id of identityClaimKeys(senderIds)) await claims.claim('sender', id, partner.partnerId, now);
    for (const id of identityClaimKeys(stored?.allowedFormSourceIds ?? [])) await claims.claim('formSource', id, partner.partnerId, now);
  }
  for (const key of DEMO_KEYS) {
    const keyHash = hashApiKey(key.secret);
    const created = await store.putKey({
      keyHash,
      keyId: keyIdFromHash(keyHash),
      partnerId: key.partnerId,
      label: key.secret,
      scopes: key.scopes,
      status: key.status,
      rateLimit: key.rateLimit,
      rateWindowSeconds: key.rateWindowSeconds,
      createdAt: now.toISOString(),
      ...(key.status === 'revoked' ? { revokedAt: now.toISOString() } : {}),
    });
    if (created) keys++;
  }
  return { partners, keys };
}
