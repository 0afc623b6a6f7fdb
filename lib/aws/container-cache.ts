/**
 * The one way wiring modules keep a value for the life of a Lambda container: built on first use,
 * rebuilt only when one of its inputs changed (an SDK client replaced by `resetClients`, another
 * table name or key id: the local stack restarting in one process, tests). Keeping the value keeps
 * what lives in it, e.g. an EnvelopeEncryptor's data key cache, across invocations.
 *
 *   const stores = new ContainerCache<WebhookStore>();
 *   export const webhookStore = () => stores.get([dynamoDbClient(), tableName('webhooks')], ([db, table]) => new WebhookStore(db, table));
 */
export class ContainerCache<T> {
  private current: { inputs: readonly unknown[]; value: T } | undefined;

  get<const I extends readonly unknown[]>(inputs: I, build: (inputs: I) => T): T {
    const current = this.current;
    if (current && current.inputs.length === inputs.length && current.inputs.every((input, i) => input === inputs[i])) return current.value;
    const value = build(inputs);
    this.current = { inputs, value };
    return value;
  }
}
