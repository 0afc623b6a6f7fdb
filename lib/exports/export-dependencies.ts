import { dynamoDbClient } from '../aws/clients';
import { ChartStore } from '../chart/chart-store';
import { tableName } from '../dynamo/table-names';
import type { ChartExportDependencies } from './chart-exports';

let cached: { client: unknown; table: string; deps: ChartExportDependencies } | undefined;

/** The chart store wired from the environment; rebuilt only when the SDK client was replaced. */
export function chartExportDependencies(): ChartExportDependencies {
  const client = dynamoDbClient();
  const table = tableName('chart');
  if (!cached || cached.client !== client || cached.table !== table) cached = { client, table, deps: { chart: new ChartStore(client, table) } };
  return cached.deps;
}
