import { randomBytes } from 'node:crypto';
import { Env } from '../config/service';
import { optionalEnv } from '../aws/environment';
import type { Principal } from '../keys/access-decision';
import type { MessageHeaderContext } from '../hl7';

export const DEFAULT_SENDING_APPLICATION = 'INTEROP';
export const DEFAULT_SENDING_FACILITY = 'INTEROP-FACILITY';
export const DEFAULT_RECEIVING_APPLICATION = 'PARTNER';

const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * MSH-10, unique per message: 9 characters of time (ms, base 32) + 11 random base-32 characters
 * (55 bits) = 20 characters, the field's maximum length.
 */
export function newMessageControlId(now: Date): string {
  let time = '';
  let t = now.getTime();
  for (let i = 0; i < 9; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(11);
  let random = '';
  for (const b of bytes) random += alphabet[b % 32];
  return time + random;
}

/** MSH-3..6: sending side from configuration, receiving side from the partner record of the key. */
export function messageHeaderFor(principal: Principal, now: Date): MessageHeaderContext {
  return {
    sendingApplication: optionalEnv(Env.hl7SendingApplication, DEFAULT_SENDING_APPLICATION),
    sendingFacility: optionalEnv(Env.hl7SendingFacility, DEFAULT_SENDING_FACILITY),
    receivingApplication: principal.receivingApplication ?? DEFAULT_RECEIVING_APPLICATION,
    receivingFacility: principal.receivingFacility ?? principal.partnerId,
    timestamp: now,
    controlId: newMessageControlId(now),
  };
}
