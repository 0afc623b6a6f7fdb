/**
 * Wiring of the FHIR intake routes from the environment: the HL7 intake's services (the lab result
 * writer, patient resolution, held records, idempotency table) and the form intake's parts.
 */
import { receiveHl7Dependencies } from '../intake/receive-hl7-wiring';
import { matchKeys, packetCipher } from '../forms/kms-wiring';
import { matchingQueue } from '../forms/queue-wiring';
import { packetIntakeWriter, patientDirectory } from '../forms/table-wiring';
import type { FhirIntakeDependencies } from './receive-fhir';

export function fhirIntakeDependencies(): FhirIntakeDependencies {
  const lab = receiveHl7Dependencies();
  return {
    lab,
    idempotency: lab.idempotency,
    forms: { store: packetIntakeWriter, patients: patientDirectory, cipher: packetCipher, keys: matchKeys, queue: matchingQueue },
  };
}
