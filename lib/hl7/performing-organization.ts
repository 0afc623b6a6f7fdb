/**
 * OBX-23 (XON), OBX-24 (XAD) and OBX-25 (XCN) of a lab test: the performing organization, its address and
 * its medical director as the lab sent them. Only the lab path writes them (labResultObservationGroup sets
 * this writer on its observations), so the encounter and assessment exports, which share the OBX builder
 * of observations.ts, do not bundle it (issue 31 item 5).
 */
import type { AssignedIdentifier, LabAddress, LabPerson } from '../chart/types';
import { type EscapedText, escapeText } from './escape';
import type { Segment } from './segment';

function hasText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** What OBX-23/24/25 are written from (the lab observation's fields of lib/hl7/observations.ts Observation). */
export interface PerformingOrganizationFields {
  performingOrganization?: string;
  performingOrganizationIdentifier?: AssignedIdentifier;
  performingOrganizationAddress?: LabAddress;
  performingOrganizationDirector?: LabPerson;
}

export function setPerformingOrganizationFields(obx: Segment, observation: PerformingOrganizationFields): void {
  const organizationId = observation.performingOrganizationIdentifier;
  if (observation.performingOrganization || (organizationId && hasText(organizationId.id))) {
    // XON-1 the organization name, whole: v2.5.1's 50 characters are a conformance length (receivers take
    // longer values; cutting would lose the lab's name: issue 27 K3); XON-10 its identifier with XON-6 / XON-7 as sent
    const identified = organizationId && hasText(organizationId.id) ? organizationId : undefined;
    obx.set(
      23,
      identified
        ? [
            escapeText(observation.performingOrganization),
            BLANK,
            BLANK,
            BLANK,
            BLANK,
            assigningAuthority(identified),
            tableCode(identified.type, IDENTIFIER_TYPES),
            BLANK,
            BLANK,
            escapeText(identified.id),
          ]
        : [escapeText(observation.performingOrganization)],
    );
  }
  if (observation.performingOrganizationAddress) {
    const address = observation.performingOrganizationAddress;
    const components = [
      [escapeText(address.line1)],
      escapeText(address.line2),
      escapeText(address.city),
      escapeText(address.state),
      escapeText(address.postalCode),
      escapeText(address.country),
      tableCode(address.type, ADDRESS_TYPES),
      BLANK,
      escapeText(address.county),
    ];
    if (components.some((component) => (Array.isArray(component) ? component[0] : component) !== '')) obx.set(24, components);
  }
  const director = observation.performingOrganizationDirector;
  if (director && (hasText(director.identifier?.id) || hasText(director.name?.family))) {
    // XCN as sent: XCN-1 with XCN-9 (assigning authority) and XCN-13 (identifier type), the name in XCN-2..6
    const id = hasText(director.identifier?.id) ? director.identifier : undefined;
    const name = director.name;
    obx.set(25, [
      escapeText(id?.id),
      escapeText(name?.family),
      escapeText(name?.given),
      escapeText(name?.middle),
      escapeText(name?.suffix),
      escapeText(name?.prefix),
      BLANK,
      BLANK,
      id ? assigningAuthority(id) : BLANK,
      BLANK,
      BLANK,
      BLANK,
      tableCode(id?.type, IDENTIFIER_TYPES),
    ]);
  }
}

/** An empty component. */
const BLANK = '' as EscapedText;
/** HL7 table 0190 (address type) and table 0203 (identifier type): a code outside them is kept in the record, not written (an invalid v2.5.1 value). */
const ADDRESS_TYPES = new Set('B BA BDL BI BR C F H L M N O P RH S SH V'.split(' '));
const IDENTIFIER_TYPES = new Set(
  'AM AMA AN ANC AND ANON ANT APRN BA BC BCT BR BRN CC CONM CY CZ DDS DEA DFN DI DL DN DO DP DPM DR DS EI EN ESN FI GI GL GN HC IND JHN LI LN LR MA MB MC MCD MCN MCR MCT MD MI MR MRT MS NCT NE NH NI NII NIIP NP NPI OD PA PC PCN PE PEN PI PN PNT PPIN PPN PRC PRN PT QA RI RN RPH RR RRI RRP SL SN SP SR SS TAX TN TPR U UPIN VN VP VS WC WCN WP XX'.split(
    ' ',
  ),
);
const tableCode = (value: string | undefined, table: ReadonlySet<string>): EscapedText =>
  typeof value === 'string' && table.has(value.trim()) ? escapeText(value.trim()) : BLANK;
const OID = /^[0-2](?:\.(?:0|[1-9]\d*))+$/;
const URL_OR_URN = /^(?:https?:\/\/\S+|urn:\S+)$/i;

/**
 * The HD (assigning authority) of an identifier as subcomponents: HD-1 namespace id, HD-2 universal id,
 * HD-3 its type, as the lab sent them. A namespace that is a FHIR system (FHIR intake, a JSON body) goes
 * where v2 puts it: `urn:oid:<oid>` as `&<oid>&ISO`, another URI as `&<uri>&URI`.
 */
export function assigningAuthority(identifier: Pick<AssignedIdentifier, 'namespace' | 'universalId' | 'universalIdType'>): EscapedText[] | EscapedText {
  const namespace = hasText(identifier.namespace) ? identifier.namespace : undefined;
  if (namespace && !hasText(identifier.universalId) && !hasText(identifier.universalIdType) && URL_OR_URN.test(namespace)) {
    const oid = /^urn:oid:(.+)$/i.exec(namespace)?.[1];
    return oid !== undefined && OID.test(oid) ? [BLANK, escapeText(oid), escapeText('ISO')] : [BLANK, escapeText(namespace), escapeText('URI')];
  }
  const parts = [escapeText(namespace), escapeText(identifier.universalId), escapeText(identifier.universalIdType)];
  return parts.some((part) => part !== '') ? parts : BLANK;
}
