import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { ChartReader } from '../chart/chart-reader';
import { tableName } from '../dynamo/table-names';
import type { ChartExportDependencies } from './chart-exports';

const cache = new ContainerCache<ChartExportDependencies>();

/** The chart store wired from the environment, kept per container. */
export function chartExportDependencies(): ChartExportDependencies {
  return cache.get([dynamoDbClient(), tableName('chart')], ([client, table]) => ({ chart: new ChartReader(client, table) }));
}
