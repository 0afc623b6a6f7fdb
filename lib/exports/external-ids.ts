/**
 * One external id per entity (issue 27 item 5; README "Identifiers"): the FHIR exports write every
 * clinician, order, accession and document number exactly as the HL7 exports write it (the stable short
 * form of lib/hl7/identifiers.ts where v2.5.1 limits the length), so that a receiver of both sees one
 * string per entity. lib/fhir shares no code with lib/hl7 (.dependency-cruiser.cjs); this module, which
 * may import both, hands the HL7 forms to the lib/fhir builders.
 */
import type { ClinicianAndOrderIds, ExternalIds } from '../fhir';
import { IDENTIFIER_LENGTH, shortIdentifier } from '../hl7';
import { documentNumberLength } from '../hl7/observations';
import { identifierNamespace } from './message-header';

/**
 * The HL7 forms of clinician ids and order numbers: all that every resource but DocumentReference
 * writes (so a function that writes no DocumentReference bundles none of the document number's rule).
 */
export function hl7ClinicianAndOrderIds(): ClinicianAndOrderIds {
  return {
    clinician: (id) => shortIdentifier(id, IDENTIFIER_LENGTH.xcn),
    orderNumber: (id) => shortIdentifier(id, IDENTIFIER_LENGTH.ei),
  };
}

/** The HL7 forms of the ids, document numbers included, in the configured namespace (`HL7_IDENTIFIER_NAMESPACE`). */
export function hl7ExternalIds(namespace: string = identifierNamespace()): ExternalIds {
  return {
    ...hl7ClinicianAndOrderIds(),
    documentNumber: (id, ns) => shortIdentifier(id, documentNumberLength({ entity: ns, clinician: ns, visit: ns })),
    entityNamespace: namespace,
  };
}
