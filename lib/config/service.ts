/**
 * One place for the facts the deployed stack, the local stack and the tests share: the endpoint
 * list, the environment variable names, the tables with their key schemas, the queues.
 * Nothing here touches AWS; `infra/` and `lib/local/` both read it, so they cannot drift.
 *
 * The facts live in small modules beside this one, each free of side effects at module level;
 * this file only re-exports them, so a Lambda bundle that imports `Env` from here carries `Env`
 * and not the endpoint list (esbuild drops every module and export a function does not use):
 *   scopes.ts          Scopes, ALL_SCOPES, STAFF_ONLY_SCOPES
 *   environment.ts     Env, STAFF_SIGN_IN_ENV
 *   tables.ts          Tables (key schemas, indexes, TTL), resourceName
 *   queues.ts          Queues
 *   resource-needs.ts  what a function may touch (ResourceNeeds, KmsPurposes, DynamoOperations)
 *   bundled-files.ts   files shipped beside a bundle (BundledFiles)
 *   routes.ts          the HTTP routes, one export each (`<name>Route`: name, method, path, scope,
 *                      anonymous, format: what a function's pipeline reads) and their list
 *   endpoint-list.ts   HttpEndpoints (routes + needs, memory, timeout), AuthorizerFunction, BackgroundFunctions
 */
export { Scopes, ALL_SCOPES, STAFF_ONLY_SCOPES, type Scope } from './scopes';
export { Env, STAFF_SIGN_IN_ENV, type EnvName } from './environment';
export { Tables, resourceName, type TableId, type IndexDefinition, type TableDefinition } from './tables';
export { Queues, type QueueId, type QueueDefinition } from './queues';
export { DynamoOperations, KmsPurposes, type Access, type DynamoOperation, type KmsPurpose, type ResourceNeeds, type TableOperation } from './resource-needs';
export { BundledFiles, type BundledFile } from './bundled-files';
// every route by name (`<name>Route`), the route list, endpointByRoute, allowedMethods
export * from './routes';
export {
  AuthorizerFunction,
  BackgroundFunctions,
  EndpointDeployments,
  HttpEndpoints,
  type BackgroundFunction,
  type EndpointDeployment,
  type HttpEndpoint,
} from './endpoint-list';
