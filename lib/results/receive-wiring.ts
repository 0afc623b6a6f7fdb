/**
 * Wiring of POST /receiveTestData from the environment: the lab result writer and the idempotency table
 * (result-wiring.ts receiveDependencies) with the filing of a JSON result (lab-filing.ts namedIdFiling):
 * relationships, chart patients and the chart's MRN index read from the chart table, held records
 * written there. Only functions/receiveTestData.ts bundles it.
 */
import { dynamoDbClient } from '../aws/clients';
import { ChartItemReader } from '../chart/chart-reader';
import { tableName } from '../dynamo/table-names';
import { HeldRecordHolder } from '../intake/held-records';
import { MrnIndex } from '../intake/mrn-index';
import { chartAssigningAuthority } from '../keys/chart-authority';
import { relationshipLookup } from '../relationships/relationship-wiring';
import { namedIdFiling } from './lab-filing';
import type { ReceiveDependencies } from './receive';
import { receiveDependencies } from './result-wiring';

/** Everything POST /receiveTestData needs, with the filing decision of a JSON result. */
export function jsonReceiveDependencies(): ReceiveDependencies {
  const db = dynamoDbClient();
  const chartTable = tableName('chart');
  const base = receiveDependencies();
  const chart = new ChartItemReader(db, chartTable);
  return {
    ...base,
    filing: namedIdFiling({
      relationships: relationshipLookup,
      chart: { getPatient: (patientId) => chart.getPatient(patientId) },
      mrnIndex: new MrnIndex(db, chartTable),
      keys: base.keys,
      chartAuthority: chartAssigningAuthority(),
      held: new HeldRecordHolder(db, chartTable),
    }),
  };
}
