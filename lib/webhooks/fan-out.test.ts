import type { Scope } from '../config/scopes';
import type { PartnerPatientRelationship } from '../relationships/relationships';
import { eventAudience, mayHearOfResult, type AudienceSource, type SubscriberStanding } from './audience';
import { eventFromNotification } from './events';
import { fanOutEvent, type FanOutDependencies } from './fan-out';
import type { Delivery, Subscription } from './types';

const NOW = new Date('2026-11-26T00:00:00.000Z');

function subscription(id: string, partnerId: string, exportScope?: boolean, over: Partial<Subscription> = {}): Subscription {
  return {
    subscriptionId: id,
    partnerId,
    url: 'https://partner.example/hooks',
    events: ['lab-result.saved'],
    enabled: true,
    ...(exportScope === undefined ? {} : { exportScope }),
    createdAt: NOW.toISOString(),
    updatedAt: NOW.toISOString(),
    ...over,
  };
}

function notification(partnerId: string | undefined, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: 'lab-result.saved',
    schemaVersion: 1,
    notificationId: 'lv_1',
    resultId: 'lr_1',
    versionId: 'lv_1',
    status: 'final',
    senderId: 'lab-a',
    ...(partnerId === undefined ? {} : { partnerId }),
    audience: 'export',
    ...extra,
  });
}

function fakeServices(subscriptions: Subscription[]): FanOutDependencies & { created: Delivery[] } {
  const created: Delivery[] = [];
  return {
    created,
    store: {
      listSubscriptions: async () => subscriptions,
      createDelivery: async (d: Delivery) => {
        created.push(d);
        return true;
      },
      getDelivery: async () => undefined,
      markQueued: async () => undefined,
    },
    enqueue: async () => undefined,
    now: () => NOW,
  };
}

const EXPORT: Scope[] = ['interop:export:hl7'];
const OWN: Scope[] = ['interop:read:own-results'];
const INTAKE: Scope[] = ['interop:ingest:results'];

/** Partners as the keys table would give them: lab-a sent the result; ehr reads every patient; hie reads related ones. */
const STANDINGS: Record<string, SubscriberStanding> = {
  'lab-a': { policy: 'active', patientAccess: 'related', scopes: new Set(INTAKE) },
  'lab-a-own': { policy: 'active', patientAccess: 'related', scopes: new Set([...INTAKE, ...OWN]) },
  'lab-b': { policy: 'active', patientAccess: 'related', scopes: new Set([...INTAKE, ...OWN]) },
  ehr: { policy: 'active', patientAccess: 'all', scopes: new Set(EXPORT) },
  'ehr-blocked': { policy: 'blocked', patientAccess: 'all', scopes: new Set(EXPORT) },
  'hie-related': { policy: 'active', patientAccess: 'related', scopes: new Set(EXPORT) },
  'hie-unrelated': { policy: 'active', patientAccess: 'related', scopes: new Set(EXPORT) },
};

function source(relations: Array<[string, string]> = [['hie-related', 'patient-1']]): AudienceSource & { versionReads: number } {
  const out = {
    versionReads: 0,
    standing: async (partnerId: string) => STANDINGS[partnerId],
    relationshipLookup: async (partnerId: string, patientId: string): Promise<PartnerPatientRelationship | undefined> =>
      relations.some(([p, q]) => p === partnerId && q === patientId)
        ? { partnerId, patientId, purpose: 'TREAT', source: 'operator', since: '2026-01-01T00:00:00.000Z', createdBy: 'test' }
        : undefined,
    readVersion: async () => {
      out.versionReads += 1;
      return { facts: { partnerId: 'lab-a', filed: true }, chartPatientId: 'patient-1' };
    },
    now: () => NOW,
  };
  return out;
}

describe('mayHearOfResult (webhook events follow read access, decided now)', () => {
  it.each([
    ['own result, the lab holds read-own', 'lab-a-own', 'lab-a-own', true, { allowed: true }],
    ['own result, no read scope at all', 'lab-a', 'lab-a', true, { allowed: false, reason: 'no-read-scope' }],
    ['own held result, read-own', 'lab-a-own', 'lab-a-own', false, { allowed: true }],
    ["another partner's result, read-own only", 'lab-b', 'lab-a', true, { allowed: false, reason: 'not-own-result' }],
    ["another partner's result, export scope, patient access all", 'ehr', 'lab-a', true, { allowed: true }],
    ["another partner's held result, export scope, all", 'ehr', 'lab-a', false, { allowed: false, reason: 'not-filed' }],
    ['a blocked partner with an export scope', 'ehr-blocked', 'lab-a', true, { allowed: false, reason: 'partner-blocked' }],
    ['a partner that no longer exists', 'gone', 'lab-a', true, { allowed: false, reason: 'partner-unknown' }],
    ['export scope, related to the chart patient', 'hie-related', 'lab-a', true, { allowed: true }],
    ['export scope, not related to the chart patient', 'hie-unrelated', 'lab-a', true, { allowed: false, reason: 'patient-not-related' }],
    ['nobody-owned result (no partner), export scope, all', 'ehr', undefined, true, { allowed: true }],
  ])('%s', async (_label, subscriber, resultPartner, filed, verdict) => {
    const src = source();
    const deps = { ...src, chartPatientOf: async () => 'patient-1' };
    expect(await mayHearOfResult(subscriber, { partnerId: resultPartner, filed }, deps)).toEqual(verdict);
  });

  it('a relationship ended meanwhile stops the event (the rule reads the relationship each time)', async () => {
    const relations: Array<[string, string]> = [['hie-related', 'patient-1']];
    const src = source(relations);
    const deps = { ...src, chartPatientOf: async () => 'patient-1' };
    expect(await mayHearOfResult('hie-related', { partnerId: 'lab-a', filed: true }, deps)).toEqual({ allowed: true });
    relations.pop();
    expect(await mayHearOfResult('hie-related', { partnerId: 'lab-a', filed: true }, deps)).toEqual({ allowed: false, reason: 'patient-not-related' });
  });

  it('an event without facts reads the version once, however many subscribers; a ping names no result', async () => {
    const src = source();
    const event = eventFromNotification(notification('lab-a'), NOW)!.event;
    const audience = eventAudience(event, undefined, src);
    expect(await audience.verdictFor('ehr')).toEqual({ allowed: true });
    expect(await audience.verdictFor('hie-related')).toEqual({ allowed: true });
    expect(await audience.verdictFor('hie-unrelated')).toEqual({ allowed: false, reason: 'patient-not-related' });
    expect(src.versionReads).toBe(1);
    const ping = eventAudience({ type: 'ping', timestamp: NOW.toISOString(), data: { eventId: 'ev_ping' } }, undefined, src);
    expect(await ping.verdictFor('lab-a')).toEqual({ allowed: true });
    expect(await ping.verdictFor('ehr-blocked')).toEqual({ allowed: false, reason: 'partner-blocked' });
  });
});

describe('fanOutEvent', () => {
  it("queues lab A's filed result to every subscriber that may read it now, with the facts on each delivery", async () => {
    const services = fakeServices([
      subscription('wh_a', 'lab-a-own'),
      subscription('wh_b', 'lab-b'),
      subscription('wh_ehr', 'ehr'),
      subscription('wh_ehr_off', 'ehr', undefined, { enabled: false }),
      subscription('wh_blocked', 'ehr-blocked'),
      subscription('wh_hie', 'hie-related'),
      subscription('wh_hie_no', 'hie-unrelated'),
    ]);
    const parsed = eventFromNotification(notification('lab-a-own'), NOW)!;
    const summary = await fanOutEvent(
      parsed.event,
      { partnerId: parsed.resultPartnerId, filed: parsed.exportAudience },
      { ...services, audience: source([['hie-related', 'patient-1']]) },
    );
    expect(services.created.map((d) => d.subscriptionId).sort()).toEqual(['wh_a', 'wh_ehr', 'wh_hie']);
    expect(services.created.every((d) => d.result?.partnerId === 'lab-a-own' && d.result.filed)).toBe(true);
    expect(summary).toEqual({ subscriptions: 3, queued: 3, refused: 3 });
  });

  it.each([
    ['a result not filed to the chart (audience partner)', { audience: 'partner' }],
    ['a message published before the audience was sent', { audience: undefined }],
  ])("queues %s to lab A's own subscriptions only", async (_label, extra) => {
    const services = fakeServices([subscription('wh_a', 'lab-a-own'), subscription('wh_ehr', 'ehr')]);
    const parsed = eventFromNotification(notification('lab-a-own', extra), NOW)!;
    await fanOutEvent(parsed.event, { partnerId: parsed.resultPartnerId, filed: parsed.exportAudience }, { ...services, audience: source() });
    expect(services.created.map((d) => d.subscriptionId)).toEqual(['wh_a']);
  });
});

describe('eventFromNotification', () => {
  it('the event carries no patientMatched, even from a message published before issue 26', () => {
    const parsed = eventFromNotification(notification('lab-a', { patientMatched: false }), NOW);
    expect(parsed).toEqual({
      event: { type: 'lab-result.saved', timestamp: NOW.toISOString(), data: { eventId: 'lv_1', resultId: 'lr_1', versionId: 'lv_1', status: 'final' } },
      resultPartnerId: 'lab-a',
      exportAudience: true,
    });
    expect(JSON.stringify(parsed!.event)).not.toContain('patientMatched');
    expect(JSON.stringify(parsed!.event)).not.toContain('audience');
  });

  it('a message without partnerId is accepted as nobody-owned; a malformed partnerId is refused', () => {
    expect(eventFromNotification(notification(undefined), NOW)?.resultPartnerId).toBeUndefined();
    expect(eventFromNotification(notification('../x y'), NOW)).toBeUndefined();
  });

  it('an audience other than export or partner is refused', () => {
    expect(eventFromNotification(notification('lab-a', { audience: 'everyone' }), NOW)).toBeUndefined();
  });
});
