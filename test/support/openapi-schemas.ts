/**
 * JSON Schema validation against the schemas of the OpenAPI document (draft 2020-12, as OpenAPI
 * 3.1 uses): `#/components/...` references resolve inside the document. Used by the document's
 * own tests (examples valid) and by the contract helper (responses valid).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const DOCUMENT_ID = 'https://interop.local/openapi.json';

export class OpenApiSchemas {
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly document: Record<string, unknown>) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    const components = (document.components ?? {}) as Record<string, unknown>;
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: components.schemas ?? {} } });
  }

  /** Every problem of `value` against `schema` (a schema object of the document), as `pointer message`. */
  errors(schema: unknown, value: unknown): string[] {
    const key = JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(absolute(schema) as object);
      this.cache.set(key, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '/'} ${e.message ?? 'invalid'}${e.params && 'allowedValues' in e.params ? ` (${String(e.params.allowedValues)})` : ''}`,
    );
  }
}

function absolute(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(absolute);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? DOCUMENT_ID + v : absolute(v);
  return out;
}
