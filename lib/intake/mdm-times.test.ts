/**
 * MDM intake reads a time stamp without an offset in the sending partner's zone (issue 27 item 4), as
 * ORU (oru-mapping.test.ts) and ADT (adt-content.test.ts) do, and stores it with that zone's offset; a
 * time with an offset keeps it (stored as written, with seconds, so the exports give it back).
 */
import { parseHl7Message } from '../hl7/parser';
import type { Principal } from '../keys/access-decision';
import { intakeMappings, type HandlerContext } from './message-handlers';

const NOW = new Date('2024-12-01T12:00:00Z');

function contextFor(timeZone?: string): HandlerContext {
  const principal: Principal = { keyId: 'k1', partnerId: 'demo-ehr', scopes: [], allowedSenderIds: ['CLINIC'], ...(timeZone ? { timeZone } : {}) };
  return { principal, requestId: 'r1', now: NOW, ownApplication: 'INTEROP' };
}

function noteOf(txaCreated: string, authenticated: string, timeZone?: string) {
  const message = parseHl7Message(
    [
      'MSH|^~\\&|EHR|CLINIC|INTEROP|HOSP|20240715090000||MDM^T02^MDM_T02|MSG1|P|2.5.1',
      'EVN|T02|20240715090000',
      'PID|1||MRN1^^^CLINIC^MR||Doe^Jane||19700101|F',
      `TXA|1|PN|TEXT||1234^Author^Ann|${txaCreated}||||||DOC-1|||||AU||AV|||1234^Author^Ann^^^^^^^^^^^^${authenticated}`,
      'OBX|1|TX|NOTE^Note^L||Line one',
    ].join('\r') + '\r',
  );
  return intakeMappings.noteFrom(message, contextFor(timeZone));
}

describe('MDM^T02 times in the partner zone', () => {
  it('TXA-6 and TXA-22.15 without an offset from a partner in America/Chicago: its summer and winter offsets (5 and 6 hours behind UTC)', () => {
    const note = noteOf('20240715083000', '202401150900', 'America/Chicago');
    expect(note).toMatchObject({ createdAt: '2024-07-15T08:30:00-05:00', authenticatedAt: '2024-01-15T09:00:00-06:00' });
    expect(new Date(note.createdAt).toISOString()).toBe('2024-07-15T13:30:00.000Z');
    expect(new Date(note.authenticatedAt!).toISOString()).toBe('2024-01-15T15:00:00.000Z');
  });

  it('a partner without a zone: UTC (the documented default)', () => {
    expect(noteOf('20240715083000', '202401150900')).toMatchObject({ createdAt: '2024-07-15T08:30:00Z', authenticatedAt: '2024-01-15T09:00:00Z' });
  });

  it('a time with an offset keeps it whatever the partner zone', () => {
    expect(noteOf('20240715083000-0400', '202401150900+0100', 'America/Chicago')).toMatchObject({
      createdAt: '2024-07-15T08:30:00-04:00',
      authenticatedAt: '2024-01-15T09:00:00+01:00',
    });
    // a fraction as written
    expect(noteOf('20240715083000.25-0400', '202401150900+0100').createdAt).toBe('2024-07-15T08:30:00.25-04:00');
  });
});
