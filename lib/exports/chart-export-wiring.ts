import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { ChartReader, ChartRecordReader } from '../chart/chart-reader';
import { tableName } from '../dynamo/table-names';
import type { ChartExportDependencies, PatientSummaryExportDependencies } from './chart-exports';

const cache = new ContainerCache<ChartExportDependencies>();

/** The chart's record reads wired from the environment, kept per container (the single-record exports). */
export function chartExportDependencies(): ChartExportDependencies {
  return cache.get([dynamoDbClient(), tableName('chart')], ([client, table]) => ({ chart: new ChartRecordReader(client, table) }));
}

const readerCache = new ContainerCache<PatientSummaryExportDependencies>();

/** The chart's reads with the timeline and record pages (the summary export, the FHIR reads and searches). */
export function chartReaderDependencies(): PatientSummaryExportDependencies {
  return readerCache.get([dynamoDbClient(), tableName('chart')], ([client, table]) => ({ chart: new ChartReader(client, table) }));
}
