import { Env, type EnvName, type TableId } from '../config/service';
import { requireEnv } from '../aws/environment';

/**
 * The environment variable naming each table: Tables[id].env (lib/config/tables.ts), repeated here
 * so that a function reading one table name does not bundle every table's key schema (`Env` is a
 * string enum esbuild inlines; table-names.test.ts checks both agree).
 */
export const TABLE_NAME_ENV: Record<TableId, EnvName> = {
  chart: Env.chartTable,
  keys: Env.keysTable,
  rateLimit: Env.rateLimitTable,
  results: Env.resultsTable,
  idempotency: Env.idempotencyTable,
  forms: Env.formsTable,
  audit: Env.auditTable,
  webhooks: Env.webhooksTable,
};

/** The physical table name for a table id, from the environment the stack (cloud or local) sets. */
export function tableName(id: TableId): string {
  return requireEnv(TABLE_NAME_ENV[id]);
}
