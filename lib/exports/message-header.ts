import { randomBytes } from 'node:crypto';
import { Env } from '../config/service';
import { optionalEnv } from '../aws/environment';
import type { Principal } from '../keys/access-decision';
import type { Hl7Profile } from '../keys/api-key';
import type { EncounterStyle, MessageHeaderContext, SummaryStyle } from '../hl7';

export const DEFAULT_SENDING_APPLICATION = 'INTEROP';
export const DEFAULT_SENDING_FACILITY = 'INTEROP-FACILITY';
export const DEFAULT_RECEIVING_APPLICATION = 'PARTNER';
/** EI-2 / XCN-9 / CX-4 of the ids the exports write, unless HL7_IDENTIFIER_NAMESPACE says otherwise */
export const DEFAULT_IDENTIFIER_NAMESPACE = 'INTEROP';
/** TXA-2 the service description fixes for the note message (table 0270 reads PN as "procedure note") */
export const DEFAULT_NOTE_DOCUMENT_TYPE = 'PN';

/** A partner's HL7 profile with the defaults applied. */
export interface ResolvedHl7Profile {
  encounterStyle: EncounterStyle;
  summaryStyle: SummaryStyle;
  noteDocumentType: string;
  sendingApplication?: string;
  sendingFacility?: string;
}

/** Table 0270 codes are upper-case letters and digits; anything else in a stored profile is ignored. */
const DOCUMENT_TYPE_CODE = /^[A-Z0-9]{1,10}$/;
/** HD namespace ids (IS, at most 20 characters) without HL7 delimiters. */
const NAMESPACE_ID = /^[!-~](?:[ -~]{0,18}[!-~])?$/;
const HL7_DELIMITERS = /[|^~\\&]/;

function namespaceOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && NAMESPACE_ID.test(value) && !HL7_DELIMITERS.test(value) ? value : undefined;
}

/**
 * The partner's profile with defaults: encounters as ADT^A08, the summary as a batch, TXA-2 `PN`,
 * the configured sending application and facility. A stored value outside its vocabulary is ignored
 * (the default applies), so a bad profile never produces an invalid message.
 */
export function hl7ProfileOf(principal: Pick<Principal, 'hl7Profile'>): ResolvedHl7Profile {
  const profile: Hl7Profile = principal.hl7Profile ?? {};
  return {
    encounterStyle: profile.encounterStyle === 'oru' ? 'oru' : 'adt',
    summaryStyle: profile.summaryStyle === 'oru' ? 'oru' : 'batch',
    noteDocumentType:
      typeof profile.noteDocumentType === 'string' && DOCUMENT_TYPE_CODE.test(profile.noteDocumentType) ? profile.noteDocumentType : DEFAULT_NOTE_DOCUMENT_TYPE,
    sendingApplication: namespaceOrUndefined(profile.sendingApplication),
    sendingFacility: namespaceOrUndefined(profile.sendingFacility),
  };
}

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

/**
 * MSH-3..6: sending side from the partner's profile, else configuration; receiving side from the
 * partner record of the key. Identifier namespaces from configuration (one for all partners, so an id
 * reads the same in every partner's messages).
 */
/** The namespace of the ids the exports write (EI-2, XCN-9, CX-4; the FHIR visit-number system): `HL7_IDENTIFIER_NAMESPACE`, else INTEROP. */
export function identifierNamespace(): string {
  return optionalEnv(Env.hl7IdentifierNamespace, DEFAULT_IDENTIFIER_NAMESPACE);
}

export function messageHeaderFor(principal: Principal, now: Date): MessageHeaderContext {
  const profile = hl7ProfileOf(principal);
  const namespace = identifierNamespace();
  return {
    sendingApplication: profile.sendingApplication ?? optionalEnv(Env.hl7SendingApplication, DEFAULT_SENDING_APPLICATION),
    sendingFacility: profile.sendingFacility ?? optionalEnv(Env.hl7SendingFacility, DEFAULT_SENDING_FACILITY),
    identifierNamespaces: { entity: namespace, clinician: namespace, visit: namespace },
    receivingApplication: principal.receivingApplication ?? DEFAULT_RECEIVING_APPLICATION,
    receivingFacility: principal.receivingFacility ?? principal.partnerId,
    timestamp: now,
    controlId: newMessageControlId(now),
  };
}
