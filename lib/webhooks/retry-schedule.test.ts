import { Queues } from '../config/service';
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS, retryDelaySeconds, retryScaleOf } from './retry-schedule';

describe('webhook retry schedule', () => {
  it('30 s, 2 min, 10 min, 1 h, then every 6 h, all within 24 h', () => {
    expect(RETRY_DELAYS_SECONDS.slice(0, 4)).toEqual([30, 120, 600, 3600]);
    const total = RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(24 * 3600);
    expect(total + 21_600).toBeGreaterThan(24 * 3600);
  });

  it('the deliveries queue dead-letters on the receive after the last attempt', () => {
    expect(Queues.webhookDeliveries.maxReceiveCount).toBe(MAX_ATTEMPTS);
  });

  it('jitter stays within +-20 % and the last attempt has no delay', () => {
    expect(retryDelaySeconds(1, 1, 0)).toBe(24);
    expect(retryDelaySeconds(1, 1, 0.9999)).toBe(36);
    expect(retryDelaySeconds(5, 1, 0.5)).toBe(21_600);
    expect(retryDelaySeconds(MAX_ATTEMPTS, 1, 0.5)).toBeUndefined();
    expect(retryDelaySeconds(0, 1, 0.5)).toBeUndefined();
  });

  it('a scale shrinks every delay; a bad scale means 1', () => {
    expect(retryDelaySeconds(5, 1 / 21_600, 0.5)).toBe(1);
    expect(retryScaleOf('0.5')).toBe(0.5);
    for (const bad of [undefined, '', '0', '-1', '2', 'fast']) expect(retryScaleOf(bad)).toBe(1);
  });
});
