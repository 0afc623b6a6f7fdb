import { eventFromNotification } from './events';
import { fanOutEvent, mayHearOf, type FanOutDependencies } from './fan-out';
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

describe('mayHearOf (webhook events follow read access)', () => {
  it.each([
    ['own result, no export scope', 'lab-a', undefined, 'lab-a', true, true],
    ["another partner's result, no export scope", 'lab-b', false, 'lab-a', true, false],
    ["another partner's result, subscription made before the flag existed", 'lab-b', undefined, 'lab-a', true, false],
    ["another partner's result, export scope", 'ehr', true, 'lab-a', true, true],
    ['result of an unknown partner, no export scope', 'lab-a', false, undefined, true, false],
    ['result of an unknown partner, export scope', 'ehr', true, undefined, true, true],
    ["another partner's result not filed to the chart, export scope", 'ehr', true, 'lab-a', false, false],
    ['own result not filed to the chart', 'lab-a', undefined, 'lab-a', false, true],
    ['result of an unknown partner not filed to the chart, export scope', 'ehr', true, undefined, false, false],
  ])('%s', (_label, partnerId, exportScope, resultPartnerId, exportAudience, expected) => {
    const result = { partnerId: resultPartnerId as string | undefined, exportAudience: exportAudience as boolean };
    expect(mayHearOf({ partnerId: partnerId as string, exportScope: exportScope as boolean | undefined }, result)).toBe(expected);
  });
});

describe('fanOutEvent', () => {
  it("queues lab A's result to A and to export-scope subscriptions only", async () => {
    const services = fakeServices([
      subscription('wh_a', 'lab-a'),
      subscription('wh_b_intake', 'lab-b', false),
      subscription('wh_b_legacy', 'lab-b'),
      subscription('wh_ehr', 'ehr', true),
      subscription('wh_ehr_off', 'ehr', true, { enabled: false }),
    ]);
    const parsed = eventFromNotification(notification('lab-a'), NOW)!;
    const summary = await fanOutEvent(parsed.event, { partnerId: parsed.resultPartnerId, exportAudience: parsed.exportAudience }, services);
    expect(services.created.map((d) => d.subscriptionId).sort()).toEqual(['wh_a', 'wh_ehr']);
    expect(summary).toEqual({ subscriptions: 2, queued: 2 });
  });

  it.each([
    ['a result not filed to the chart (audience partner)', { audience: 'partner' }],
    ['a message published before the audience was sent', { audience: undefined }],
  ])("queues %s to lab A's own subscriptions only", async (_label, extra) => {
    const services = fakeServices([subscription('wh_a', 'lab-a'), subscription('wh_ehr', 'ehr', true)]);
    const parsed = eventFromNotification(notification('lab-a', extra), NOW)!;
    await fanOutEvent(parsed.event, { partnerId: parsed.resultPartnerId, exportAudience: parsed.exportAudience }, services);
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
