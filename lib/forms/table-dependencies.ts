/**
 * The DynamoDB half of the forms wiring (forms table, chart), and the builder every forms function
 * starts from. This module imports the DynamoDB client only: a function adds the chart
 * (patientDirectory), the KMS parts (kms-dependencies.ts) or the queue (queue-dependencies.ts)
 * only when its `needs` (lib/config/service.ts) list them, so its bundle carries no other SDK
 * client and no code it never runs:
 *
 *   listInteropInbox     formsDependenciesWith('listInteropInbox')
 *   getInboxPacket       formsDependenciesWith('getInboxPacket', { cipher: packetCipher })
 *   routeInboxPacket     formsDependenciesWith('routeInboxPacket', { patients: patientDirectory })
 *   sweepPendingPackets  formsDependenciesWith('sweepPendingPackets', { queue: matchingQueue })
 *
 * dependencies.ts keeps the wiring with every part (formsDependencies(), for the CLIs, the local
 * stack and the match index) and the explicit wiring for tests.
 */
import { dynamoDbClient } from '../aws/clients';
import { AuditTrail } from '../audit/audit-trail';
import { ChartStore } from '../chart/chart-store';
import { tableName } from '../dynamo/table-names';
import type { FormsDeps, PatientDirectory } from './dependencies';
import { FormsStore } from './packet-store';

/** The forms table, from the per-container DynamoDB client. */
export function formsStore(): FormsStore {
  return new FormsStore(dynamoDbClient(), tableName('forms'));
}

/** The chart, read to check that a patient exists. */
export function patientDirectory(): PatientDirectory {
  return new ChartStore(dynamoDbClient(), tableName('chart'));
}

/** The audit trail the matcher appends a record to for every packet it routes. */
export function auditTrail(): AuditTrail {
  return new AuditTrail(dynamoDbClient(), tableName('audit'));
}

/** The parts a function adds when its `needs` list their table, key or queue (the forms table is always wired). */
export type OptionalFormsParts = Partial<Pick<FormsDeps, 'patients' | 'cipher' | 'keys' | 'queue' | 'audit'>>;

/** Thrown when a function reaches a part its wiring leaves out: a wiring bug, never a runtime condition. */
export class FormsPartNotWiredError extends Error {
  override readonly name = 'FormsPartNotWiredError';
  constructor(
    readonly functionName: string,
    readonly part: string,
  ) {
    super(`${functionName}: forms dependency "${part}" is not wired into this function (lib/forms/table-dependencies.ts)`);
  }
}

function notWired<T>(functionName: string, part: keyof OptionalFormsParts): () => T {
  return () => {
    throw new FormsPartNotWiredError(functionName, part);
  };
}

/**
 * The deployed wiring of one function: the forms table, plus exactly the given parts (a part left
 * out throws FormsPartNotWiredError when called). Every call builds cheap wrappers around the
 * per-container clients (lib/aws/clients.ts).
 */
export function formsDependenciesWith(functionName: string, parts: OptionalFormsParts = {}): FormsDeps {
  return {
    store: formsStore,
    patients: parts.patients ?? notWired(functionName, 'patients'),
    cipher: parts.cipher ?? notWired(functionName, 'cipher'),
    keys: parts.keys ?? notWired(functionName, 'keys'),
    queue: parts.queue ?? notWired(functionName, 'queue'),
    audit: parts.audit ?? notWired(functionName, 'audit'),
  };
}
