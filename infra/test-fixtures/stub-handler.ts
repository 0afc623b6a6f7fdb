/**
 * Stand-in entry for synthesis tests of functions that the lists may hold in the future (e.g. a
 * queue worker or a sweeper in BackgroundFunctions): proves the infra handles any list, without
 * writing into functions/. Never deployed.
 */
export const handler = async (): Promise<{ batchItemFailures: never[] }> => ({ batchItemFailures: [] });
