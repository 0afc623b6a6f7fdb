/** The part of `@redoxengine/redox-hl7-v2` (1.0.1, untyped CommonJS) the tests use. */
declare module '@redoxengine/redox-hl7-v2' {
  const redoxHl7: {
    /** Parses a message into JSON by its message structure; throws when a required segment is missing or out of order. */
    Parser: new (overrideSchema?: object) => { parse(message: string): Record<string, unknown> };
  };
  export = redoxHl7;
}
