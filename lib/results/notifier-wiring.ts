/**
 * The notifications queue publisher, wired from the environment. Apart from result-wiring.ts so the
 * notification retry (retry-wiring.ts) gets it without the KMS and S3 wiring there.
 */
import { sqsClient } from '../aws/clients';
import { requireEnv } from '../aws/environment';
import { Env } from '../config/service';
import { ResultNotifier } from './notifications';

export function resultNotifier(): ResultNotifier {
  return new ResultNotifier(sqsClient(), requireEnv(Env.notificationsQueueUrl));
}
