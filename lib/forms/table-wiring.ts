/**
 * The DynamoDB parts of the forms wiring (forms table, chart, audit trail). This module imports
 * the DynamoDB client only. A function's wiring is an object literal of exactly the parts its
 * domain operation takes (`Pick<FormsDependencies, ...>`, checked by the compiler), taking the KMS parts
 * (kms-wiring.ts) or the queue (queue-wiring.ts) only when its `needs`
 * (lib/config/service.ts) list them, so its bundle carries no other SDK client:
 *
 *   listInteropInbox     { store: formsStore }
 *   getInboxPacket       { store: formsStore, cipher: packetCipher, patients: patientDirectory }
 *   sweepPendingPackets  { store: formsStore, queue: matchingQueue }
 *
 * forms-wiring.ts keeps the wiring with every part (formsDependencies(), for the CLIs, the local
 * stack and the match index) and the explicit wiring for tests.
 */
import { dynamoDbClient } from '../aws/clients';
import { AuditTrail } from '../audit/audit-trail';
import { ChartItemReader } from '../chart/chart-reader';
import { tableName } from '../dynamo/table-names';
import type { PatientDirectory } from './forms-dependencies';
import { PacketIntakeWriter } from './packet-intake-writer';
import { PacketReader, PacketStateReader } from './packet-reader';
import { FormsStore } from './packet-store';

/** The forms table with every read and write, from the per-container DynamoDB client (matcher, sweeper, routing). */
export function formsStore(): FormsStore {
  return new FormsStore(dynamoDbClient(), tableName('forms'));
}

/** A packet, the match index and its key: reads only (the packet view, its candidates, the chart searches). */
export function packetReader(): PacketReader {
  return new PacketReader(dynamoDbClient(), tableName('forms'));
}

/** The reads plus the inbox states' pages (the inbox listing). */
export function packetStateReader(): PacketStateReader {
  return new PacketStateReader(dynamoDbClient(), tableName('forms'));
}

/** The reads plus intake's two conditional puts (a new packet, the match index key on first use). */
export function packetIntakeWriter(): PacketIntakeWriter {
  return new PacketIntakeWriter(dynamoDbClient(), tableName('forms'));
}

/** The chart, read to check that a patient exists. */
export function patientDirectory(): PatientDirectory {
  return new ChartItemReader(dynamoDbClient(), tableName('chart'));
}

/** The audit trail the matcher appends a record to for every packet it routes. */
export function auditTrail(): AuditTrail {
  return new AuditTrail(dynamoDbClient(), tableName('audit'));
}
