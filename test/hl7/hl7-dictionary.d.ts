/*
 * Types of the parts of the `hl7-dictionary` package (1.0.1) the structure validator reads. The package
 * ships plain CommonJS data without typings. Only the v2.5.1 definitions and the shared tables are loaded
 * (the package's main entry loads every version, which is slow).
 */

interface Hl7DictionaryStructureNode {
  name: string;
  desc: string;
  min: number;
  /** 0 = unbounded */
  max: number;
  /** a group: segments (or groups) in sequence */
  children?: Hl7DictionaryStructureNode[];
  /** a choice: one of these */
  compounds?: Hl7DictionaryStructureNode[];
}

interface Hl7DictionaryMessage {
  name: string;
  desc: string;
  segments: { desc: string; segments: Hl7DictionaryStructureNode[] };
}

interface Hl7DictionaryField {
  datatype: string;
  desc: string;
  len?: number;
  /** 1 = optional, 2 = required (the package README says 0/1, the data uses 1/2) */
  opt: number;
  /** 0 = unbounded, otherwise the maximum number of repetitions */
  rep: number;
  table?: number;
}

interface Hl7DictionaryVersion {
  messages: Record<string, Hl7DictionaryMessage>;
  segments: Record<string, { desc: string; fields: Hl7DictionaryField[] }>;
  /** data types: composite ones have subfields (components), primitive ones an empty list */
  fields: Record<string, { desc: string; subfields: Hl7DictionaryField[] }>;
}

interface Hl7DictionaryTable {
  desc: string;
  values: Record<string, string>;
}

declare module 'hl7-dictionary/lib/2.5.1/index.js' {
  const definitions: Hl7DictionaryVersion;
  export = definitions;
}

declare module 'hl7-dictionary/lib/tables.js' {
  const tables: Record<string, Hl7DictionaryTable>;
  export = tables;
}
