/**
 * The attributes (besides the keys) of a form packet that the forms state index byStateSummary carries:
 * what the inbox listing and the sweeper read (lib/forms/packet-items.ts SUMMARY_ATTRIBUTES). Its own
 * module, re-exported by tables.ts: a bundle that imported it from tables.ts also kept the whole table
 * definition (`Tables`, 1.3 KB) although nothing in the function read it.
 */
export const FORMS_STATE_SUMMARY_ATTRIBUTES = [
  'packetId',
  'state',
  'reason',
  'sourceSystemId',
  'formId',
  'receivedAt',
  'stateChangedAt',
  'requestedPatientId',
  'candidates',
  'queueAttempts',
] as const;
