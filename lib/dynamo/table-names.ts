import { Tables, type TableId } from '../config/service';
import { requireEnv } from '../aws/environment';

/** The physical table name for a table id, from the environment the stack (cloud or local) sets. */
export function tableName(id: TableId): string {
  return requireEnv(Tables[id].env);
}
