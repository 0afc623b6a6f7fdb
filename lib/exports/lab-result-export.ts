/**
 * The lab result export as a domain operation: the current version of a result, decrypted (reports
 * restored from S3), with the chart patient when the result's patient is matched, as ORU^R01.
 * An unknown result id is "not found"; a matched patient that has since left the chart is written as
 * an unmatched one (the lab's patient id only).
 */
import type { ChartStore } from '../chart/chart-store';
import { RecordNotFoundError } from '../domain-errors';
import { encodeLabResultMessage, type LabReportInput } from '../hl7';
import type { LabResultStore } from '../results/result-store';
import type { ExportContext } from './chart-exports';
import { messageHeaderFor } from './message-header';

export interface LabResultExportDependencies {
  results: Pick<LabResultStore, 'readCurrent'>;
  chart: Pick<ChartStore, 'getPatient'>;
}

export interface LabResultExport {
  message: string;
  /** the chart patient id when matched (for the audit record) */
  patientId?: string;
}

export async function exportLabResultMessage(deps: LabResultExportDependencies, ids: { resultId: string }, ctx: ExportContext): Promise<LabResultExport> {
  const version = await deps.results.readCurrent(ids.resultId);
  if (!version) throw new RecordNotFoundError('lab result');
  const data = version.submission.data;
  const patient = version.patientMatched ? await deps.chart.getPatient(data.patientID) : undefined;
  const reports: LabReportInput[] = (Array.isArray(data.reports) ? data.reports : []).map((r) => ({
    name: r.name,
    type: r.type,
    source: r.source,
    data: r.data,
  }));
  const message = encodeLabResultMessage({
    header: messageHeaderFor(ctx.principal, ctx.now),
    result: {
      resultId: version.resultId,
      accessionNumber: data.accessionNumber,
      status: version.status,
      resultedAt: version.resultedAt,
      senderId: version.senderId,
      results: version.results.map((r) => ({
        testName: r.testName,
        result: r.result,
        ...(typeof r.units === 'string' ? { units: r.units } : {}),
        ...(typeof r.referenceRange === 'string' ? { referenceRange: r.referenceRange } : {}),
      })),
    },
    patient,
    labPatient: { patientId: data.patientID, senderId: version.senderId },
    reports,
  });
  return { message, ...(patient ? { patientId: patient.patientId } : {}) };
}
