/**
 * What the forms domain works with, as parts: each domain operation takes exactly the parts it
 * uses (`Pick<FormsDependencies, ...>`), so a function's wiring (an object literal in its functions/ file)
 * is checked complete by the compiler. Built by table-wiring.ts (DynamoDB parts),
 * kms-wiring.ts (KMS), queue-wiring.ts (SQS); forms-wiring.ts wires every part.
 */
import type { RelationshipLookup } from '../relationships/patient-access';
import type { AuditRecord } from '../audit/audit-trail';
import type { Patient } from '../chart/types';
import type { MatchKeys } from './match-keys';
import type { MatchingQueue } from './matching-queue';
import type { PacketCipher } from './packet-crypto';
import type { FormsStore } from './packet-store';

export interface PatientDirectory {
  getPatient(patientId: string): Promise<Patient | undefined>;
}

/** Where the matcher appends the audit record of each packet it routes (lib/audit/audit-trail.ts). */
export interface RoutingAuditSink {
  append(record: AuditRecord): Promise<void>;
}

/**
 * The forms table part narrowed to the class an operation calls (packet-reader.ts: PacketReader,
 * PacketStateReader; packet-intake-writer.ts: PacketIntakeWriter; FormsStore extends the readers
 * and has every write), so a function wires the smallest store and bundles only that class.
 */
export interface StorePart<S> {
  store(): S;
}

export interface FormsDependencies {
  store(): FormsStore;
  audit(): RoutingAuditSink;
  patients(): PatientDirectory;
  cipher(): PacketCipher;
  keys(): MatchKeys;
  queue(): MatchingQueue;
  /** the partner's relationship with a chart patient: a packet is routed only to a related patient */
  relationships: RelationshipLookup;
}
