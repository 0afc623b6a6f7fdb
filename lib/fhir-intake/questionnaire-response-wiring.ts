/**
 * Wiring of POST /fhir/QuestionnaireResponse from the environment: the form intake's parts (packets,
 * match key, matching queue: those of POST /receiveFormIntakeScope), the idempotency table and the
 * results table's keyed hashes for x-request-id. No lab result writer: this route takes forms only.
 */
import { dynamoDbClient, kmsClient } from '../aws/clients';
import { Env } from '../config/service';
import { tableName } from '../dynamo/table-names';
import { matchKeys, packetCipher } from '../forms/kms-wiring';
import type { FormIntakeDependencies } from '../forms/intake';
import { matchingQueue } from '../forms/queue-wiring';
import { packetIntakeWriter, patientDirectory } from '../forms/table-wiring';
import { relationshipLookup } from '../relationships/relationship-wiring';
import { IdempotencyStore } from '../results/idempotency';
import { loadResultKeys, type ResultKeys } from '../results/lookup-keys';
import { questionnaireResponseEntries } from './questionnaire-response-entries';
import type { FhirIntakeDependencies } from './receive-fhir';

/** The form intake's parts, as POST /receiveFormIntakeScope has them. */
export function formIntakeDependencies(): FormIntakeDependencies {
  return {
    store: packetIntakeWriter,
    patients: patientDirectory,
    cipher: packetCipher,
    keys: matchKeys,
    queue: matchingQueue,
    relationships: relationshipLookup,
  };
}

/** The results table's keyed hashes, created on first use as the lab result writer creates them (lib/results/result-wiring.ts). */
async function resultKeys(): Promise<ResultKeys> {
  const source = { db: dynamoDbClient(), table: tableName('results'), kms: kmsClient(), kmsKeyId: process.env[Env.kmsKeyId] || undefined };
  return (await loadResultKeys(source, { create: true }))!;
}

export function fhirQuestionnaireResponseIntakeDependencies(): FhirIntakeDependencies {
  return {
    keys: resultKeys,
    idempotency: new IdempotencyStore(dynamoDbClient(), tableName('idempotency')),
    entries: { QuestionnaireResponse: questionnaireResponseEntries(formIntakeDependencies()) },
  };
}
