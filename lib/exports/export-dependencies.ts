import { dynamoDbClient } from '../aws/clients';
import { ChartStore } from '../chart/chart-store';
import { tableName } from '../dynamo/table-names';
import type { ChartExportDependencies } from './chart-exports';

let cached: ChartExportDependencies | undefined;

/** The chart store (and, for the summary, the lab results reader) wired from the environment. */
export function chartExportDependencies(): ChartExportDependencies {
  cached ??= { chart: new ChartStore(dynamoDbClient(), tableName('chart')) };
  return cached;
}
