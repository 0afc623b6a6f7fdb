/**
 * LOCAL STACK ONLY (never deployed): what the EventBridge schedule of revokeExpiredKeys
 * (rate(15 minutes), lib/config/service.ts) does in the cloud. Calls the real handler every
 * `intervalMs` (default 60 s, so a rotation's overlap ends visibly in a local session); on the
 * local stack it revokes in the keys table only (no API Gateway there).
 *
 *   const keys = startLocalKeyExpiry({ intervalMs: 60_000 });
 *   ...
 *   await keys.stop(); // before the DynamoDB server closes
 */
import { BackgroundFunctions } from '../config/service';
import { logger } from '../observability/logger';
import { loadHandler } from './function-registry';
import { lambdaContext } from './lambda-context';

const KEY_EXPIRY = 'revokeExpiredKeys';

export interface LocalKeyExpiry {
  stop(): Promise<void>;
}

export function startLocalKeyExpiry(options: { intervalMs?: number } = {}): LocalKeyExpiry {
  const intervalMs = Math.max(10, options.intervalMs ?? 60_000);
  const timeoutSeconds = BackgroundFunctions.find((f) => f.name === KEY_EXPIRY)?.timeoutSeconds ?? 60;
  const abort = new AbortController();
  const running = (async () => {
    while (!abort.signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        abort.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      if (abort.signal.aborted) break;
      try {
        const handler = await loadHandler(KEY_EXPIRY);
        await handler({}, lambdaContext(KEY_EXPIRY, timeoutSeconds), () => undefined);
      } catch (error) {
        logger.warn('local.key_expiry_failed', { function: KEY_EXPIRY, errorName: (error as Error | undefined)?.name ?? 'unknown' });
      }
    }
  })();
  let stopped: Promise<void> | undefined;
  return {
    stop: () => {
      stopped ??= (abort.abort(), running);
      return stopped;
    },
  };
}
