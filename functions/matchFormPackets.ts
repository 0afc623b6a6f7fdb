/**
 * Matching worker — consumer of the matching queue (Queues.matching; DLQ after maxReceiveCount).
 * Each message body is {"v":1,"packetId":"fp_..."} (no PHI). Records are processed concurrently;
 * a record that fails with an error a retry can fix, or whose body is not a matching message, is
 * reported in `batchItemFailures` (the event source mapping must enable ReportBatchItemFailures)
 * and comes back; the others are deleted. Re-delivery is harmless: the packet's state decides.
 */
import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { matchKeys, packetCipher } from '../lib/forms/kms-wiring';
import { matchPacket } from '../lib/forms/matching';
import { parseMatchingMessage } from '../lib/forms/matching-queue';
import { auditTrail, formsStore, patientDirectory } from '../lib/forms/table-wiring';
import { logger } from '../lib/observability/logger';
import { relationshipLookup } from '../lib/relationships/relationship-wiring';

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const deps = { store: formsStore, patients: patientDirectory, cipher: packetCipher, keys: matchKeys, audit: auditTrail, relationships: relationshipLookup };
  const failures: SQSBatchItemFailure[] = [];
  await Promise.all(
    (event.Records ?? []).map(async (record) => {
      const started = Date.now();
      const packetId = parseMatchingMessage(record.body);
      const attempt = Number(record.attributes?.ApproximateReceiveCount ?? '1');
      if (!packetId) {
        logger.warn('forms.match.bad_message', { function: 'matchFormPackets', attempt });
        failures.push({ itemIdentifier: record.messageId });
        return;
      }
      try {
        const result = await matchPacket(packetId, deps);
        logger.info('forms.match.done', {
          function: 'matchFormPackets',
          packetId,
          decision: result.outcome,
          reason: result.reason,
          count: result.candidateCount,
          attempt,
          durationMs: Date.now() - started,
        });
      } catch (error) {
        logger.error('forms.match.failed', {
          function: 'matchFormPackets',
          packetId,
          attempt,
          errorName: (error as Error | undefined)?.name ?? 'unknown',
          durationMs: Date.now() - started,
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
};
