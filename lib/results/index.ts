/**
 * Lab result intake: the public surface for endpoints and other domains (the patient summary
 * export reads through `labResultStore({ documents: false }).recentResultsForPatient`).
 */
export {
  receiveLabResult,
  senderAllowed,
  SUCCESS_MESSAGE,
  type ReceiveInput,
  type ReceiveOutcome,
  type ReceiveResponseBody,
  type ReceiveServices,
} from './receive';
export { LabResultStore, type VersionRecord } from './result-store';
export { labResultStore, labResultEncryptor, receiveServices, resultNotifier, LAB_RESULT_DATA_KEY_MAX_USES, LAB_RESULT_DATA_KEY_MAX_AGE_MS } from './services';
export { retryPendingNotifications, type RetrySummary } from './retry';
export { acceptLabResult, labResultErrors } from './validation';
export { normalizeStatus, statusRank, LAB_RESULT_STATUSES, ACCEPTED_STATUS_VALUES } from './status';
export { notificationFor, type ResultNotification } from './notifications';
export type {
  LabResultSummary,
  StoredLabResultSummary,
  LabResultStatus,
  LabResultSubmission,
  LabResultData,
  LabTestResult,
  LabReport,
  LabResultVersion,
  LabResultVersionInfo,
  NotificationState,
} from './types';
