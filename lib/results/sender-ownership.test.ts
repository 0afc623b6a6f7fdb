import { formSourceAllowed } from '../forms/intake';
import { senderAllowed } from './receive';

describe('sender ids and form sources: exact ids only (one owner each), a stored wildcard allows nothing', () => {
  it('a partner may send only for the sender ids it lists', () => {
    expect(senderAllowed({ allowedSenderIds: ['ACME-LIS'] }, 'ACME-LIS')).toBe(true);
    expect(senderAllowed({ allowedSenderIds: ['ACME-LIS'] }, 'OTHER-LIS')).toBe(false);
    expect(senderAllowed({ allowedSenderIds: [] }, 'ACME-LIS')).toBe(false);
  });

  it("a '*' stored before sender ids had one owner covers no other partner's sender, nor the id '*'", () => {
    expect(senderAllowed({ allowedSenderIds: ['*'] }, 'DEMO-LAB-LIS')).toBe(false);
    expect(senderAllowed({ allowedSenderIds: ['*'] }, '*')).toBe(false);
    expect(formSourceAllowed({ allowedFormSourceIds: ['*'] }, 'demo-forms')).toBe(false);
    expect(formSourceAllowed({ allowedFormSourceIds: ['*'] }, '*')).toBe(false);
    expect(formSourceAllowed({ allowedFormSourceIds: ['demo-forms'] }, 'demo-forms')).toBe(true);
  });
});
