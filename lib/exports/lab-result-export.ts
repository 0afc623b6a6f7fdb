/**
 * The lab result export as a domain operation: the current version of a result, decrypted (reports
 * restored from S3), with the chart patient when the result's patient is matched, as ORU^R01.
 * An unknown result id is "not found"; a matched patient that has since left the chart is written as
 * an unmatched one (the lab's patient id only).
 *
 * Who reads what: a partner reads back every result it sent (with an export scope or
 * interop:read:own-results alone). Another partner's result needs the export scope and a chart
 * patient the caller's patient access reaches (lib/relationships/patient-access.ts): a result not
 * filed to the chart (held for review, or for a patient id the chart does not know), or one of a
 * patient the caller may not read, is "not found", the same answer as an id that names nothing, so a
 * second partner can neither read it nor learn that it exists. A partner reading its own result of a
 * chart patient it may no longer read gets it written as unmatched (the lab's patient id only).
 */
import type { ChartRecordReader } from '../chart/chart-reader';
import { Scopes } from '../config/scopes';
import { LAB_TEST_LIST_FIELDS, LAB_TEST_OBJECT_FIELDS, LAB_TEST_TEXT_FIELDS, type LabOrder, type LabTestSummary } from '../chart/types';
import { RecordNotFoundError } from '../domain-errors';
import { encodeLabResultExport, type LabReportInput } from '../hl7';
import type { Principal } from '../keys/access-decision';
import { patientReadReach, type RelationshipLookup } from '../relationships/patient-access';
import type { LabResultVersionReader } from '../results/result-version-reader';
import type { LabResultVersion } from '../results/types';
import type { ExportContext } from './chart-exports';
import { messageHeaderFor } from './message-header';

export interface LabResultExportDependencies {
  results: Pick<LabResultVersionReader, 'readCurrent'>;
  chart: Pick<ChartRecordReader, 'getPatient'>;
  relationships: RelationshipLookup;
}

export interface LabResultExport {
  message: string;
  /** reports the result holds, and how many the message carries (the rest left out at the size budget) */
  reportsAvailable: number;
  reportsIncluded: number;
  cut: boolean;
  /** the chart patient id when matched (for the audit record) */
  patientId?: string;
}

/** The optional fields of a test (lib/chart/types.ts), copied when present (OBX-7 is left out when the range is in other units than OBX-6: lib/hl7/observations.ts). */
const OPTIONAL_TEST_FIELDS = [...LAB_TEST_TEXT_FIELDS, ...LAB_TEST_OBJECT_FIELDS, ...LAB_TEST_LIST_FIELDS];

/**
 * A stored test as the exports read it: the spec's fields and every optional field of the lab model
 * that the stored version holds (a record stored before them has none and exports as it always did).
 */
export function labTestSummaryOf(stored: LabTestSummary): LabTestSummary {
  const test: LabTestSummary = { testName: stored.testName, result: stored.result };
  const target = test as unknown as Record<string, unknown>;
  for (const field of OPTIONAL_TEST_FIELDS) {
    const value: unknown = stored[field];
    if (value !== undefined && value !== null) target[field] = value;
  }
  return test;
}

/** The order of a stored version (`data.order` of the submission), when the lab sent one. */
export function labOrderOf(data: object): LabOrder | undefined {
  const order: unknown = (data as { order?: unknown }).order;
  return order !== null && typeof order === 'object' && !Array.isArray(order) ? (order as LabOrder) : undefined;
}

/** Before decryption: a partner's own result, or a chart result for a holder of the export scope (whose patient reach is asked next). */
function mayRead(version: Pick<LabResultVersion, 'patientMatched' | 'partnerId'>, principal: Principal): boolean {
  return version.partnerId === principal.partnerId || (version.patientMatched && principal.scopes.includes(Scopes.exportHl7));
}

/**
 * The current version as ORU^R01 within the export's size budget (`maxBytes`, default lib/hl7
 * DEFAULT_LAB_RESULT_MAX_BYTES, below Lambda's 6 MB response limit): reports that would pass it are
 * left out and an NTE says so (lib/hl7/lab-result-message.ts).
 */
export async function exportLabResultMessage(
  deps: LabResultExportDependencies,
  ids: { resultId: string },
  ctx: ExportContext & { maxBytes?: number },
): Promise<LabResultExport> {
  // the read rule on the plain attributes, before anything is decrypted
  const version = await deps.results.readCurrent(ids.resultId, (plain) => mayRead(plain, ctx.principal));
  if (!version || !mayRead(version, ctx.principal)) throw new RecordNotFoundError('lab result');
  const data = version.submission.data;
  const own = version.partnerId === ctx.principal.partnerId;
  const reach = version.patientMatched ? await patientReadReach(ctx.principal, version.filedPatientId, deps.relationships, ctx.now) : { allowed: false };
  if (!own && !reach.allowed) throw new RecordNotFoundError('lab result');
  const patient = reach.allowed ? await deps.chart.getPatient(version.filedPatientId) : undefined;
  const reports: LabReportInput[] = (Array.isArray(data.reports) ? data.reports : []).map((r) => ({
    name: r.name,
    type: r.type,
    source: r.source,
    data: r.data,
  }));
  const order = labOrderOf(data);
  const encoded = encodeLabResultExport({
    header: messageHeaderFor(ctx.principal, ctx.now),
    result: {
      resultId: version.resultId,
      accessionNumber: data.accessionNumber,
      status: version.status,
      resultedAt: version.resultedAt,
      senderId: version.senderId,
      results: version.results.map(labTestSummaryOf),
      ...(order ? { order } : {}),
    },
    patient,
    labPatient: { patientId: data.patientID, senderId: version.senderId },
    reports,
    ...(ctx.maxBytes !== undefined ? { maxBytes: ctx.maxBytes } : {}),
  });
  return {
    message: encoded.text,
    reportsAvailable: encoded.reportsAvailable,
    reportsIncluded: encoded.reportsIncluded,
    cut: encoded.cut,
    ...(patient ? { patientId: patient.patientId } : {}),
  };
}
