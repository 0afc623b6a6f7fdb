/**
 * Backoff of failed webhook deliveries: after attempt n (1-based) fails, the next one is due after
 * RETRY_DELAYS_SECONDS[n-1] (30 s, 2 min, 10 min, 1 h, then every 6 h while the total stays within
 * 24 h), each with +-20 % jitter so many failing deliveries do not retry in step. After the last
 * delay's attempt fails too, the delivery is dead-lettered. `scale` multiplies every delay
 * (WEBHOOK_RETRY_SCALE; tests use a tiny one).
 */
export const RETRY_DELAYS_SECONDS = [30, 120, 600, 3600, 21_600, 21_600, 21_600] as const;
/** attempts of one delivery message before it is dead-lettered */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** SQS's upper bound for a message's visibility timeout (12 h) */
const MAX_VISIBILITY_SECONDS = 43_200;
const JITTER = 0.2;

/**
 * Seconds until the next attempt after attempt `attempt` failed, or undefined when it was the last.
 * `random` is in [0, 1).
 */
export function retryDelaySeconds(attempt: number, scale: number, random: number): number | undefined {
  if (!Number.isInteger(attempt) || attempt < 1 || attempt > RETRY_DELAYS_SECONDS.length) return undefined;
  const base = RETRY_DELAYS_SECONDS[attempt - 1]! * scale;
  const jittered = base * (1 - JITTER + 2 * JITTER * random);
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.round(jittered)));
}

/** WEBHOOK_RETRY_SCALE as a number in (0, 1]; anything else is 1. */
export function retryScaleOf(value: string | undefined): number {
  const n = value === undefined || value === '' ? NaN : Number(value);
  return Number.isFinite(n) && n > 0 && n <= 1 ? n : 1;
}
