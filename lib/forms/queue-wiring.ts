/**
 * The SQS half of the forms wiring: the matching queue. Imported only by the functions that send
 * to it (receiveFormIntakeScope, sweepPendingPackets) and by the full wiring in forms-wiring.ts.
 * MATCHING_QUEUE_URL is read when the queue is built, so a function that never queues does not
 * need the variable.
 */
import { sqsClient } from '../aws/clients';
import { requireEnv } from '../aws/environment';
import { Env } from '../config/service';
import { MatchingQueue } from './matching-queue';

export function matchingQueue(): MatchingQueue {
  return new MatchingQueue(sqsClient(), requireEnv(Env.matchingQueueUrl));
}
