/**
 * Structured JSON logs that can only carry ids, counts, timings and outcomes.
 * The field list is closed on purpose: PHI (names, dates of birth, MRNs, note text, results,
 * answers) has no field to go into. Free text is limited to `event` and `errorName`.
 */
export interface LogFields {
  requestId?: string;
  function?: string;
  method?: string;
  route?: string;
  status?: number;
  durationMs?: number;
  keyId?: string;
  partnerId?: string;
  decision?: string;
  resultId?: string;
  packetId?: string;
  subscriptionId?: string;
  deliveryId?: string;
  recordCount?: number;
  count?: number;
  attempt?: number;
  errorName?: string;
  reason?: string;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogSink = (line: string) => void;
let sink: LogSink = (line) => process.stdout.write(line + '\n');

/** Tests capture log lines through this (and assert no PHI reaches them). */
export function setLogSink(next: LogSink): LogSink {
  const previous = sink;
  sink = next;
  return previous;
}

function threshold(): number {
  const level = (process.env.LOG_LEVEL ?? 'info') as LogLevel;
  return order[level] ?? order.info;
}

export function log(level: LogLevel, event: string, fields: LogFields = {}): void {
  if (order[level] < threshold()) return;
  sink(JSON.stringify({ level, event, time: new Date().toISOString(), ...fields }));
}

export const logger = {
  debug: (event: string, fields?: LogFields) => log('debug', event, fields),
  info: (event: string, fields?: LogFields) => log('info', event, fields),
  warn: (event: string, fields?: LogFields) => log('warn', event, fields),
  error: (event: string, fields?: LogFields) => log('error', event, fields),
};
