/**
 * References inside what a partner posts: `#id` (a resource contained in the referring resource),
 * `urn:uuid:...` / `urn:oid:...` (a Bundle entry's fullUrl), `Type/id` or an absolute URL ending in
 * `Type/id` (a Bundle entry with that fullUrl, or with that type and id). Anything else is external
 * (e.g. `Patient/<chart id>`: a resource of the service, never fetched from elsewhere). Pure.
 */

export type FhirObject = Record<string, unknown>;

export function isObject(value: unknown): value is FhirObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export interface BundleIndex {
  /** entries by fullUrl and by `Type/id` */
  byKey: Map<string, { resource: FhirObject; index: number }>;
}

export function indexBundle(entries: ReadonlyArray<{ fullUrl?: unknown; resource?: unknown }>): BundleIndex {
  const byKey = new Map<string, { resource: FhirObject; index: number }>();
  entries.forEach((entry, index) => {
    if (!isObject(entry.resource)) return;
    const resource = entry.resource;
    if (typeof entry.fullUrl === 'string') byKey.set(entry.fullUrl, { resource, index });
    if (typeof resource.resourceType === 'string' && typeof resource.id === 'string') byKey.set(`${resource.resourceType}/${resource.id}`, { resource, index });
  });
  return { byKey };
}

export type Resolved =
  | { kind: 'contained'; resource: FhirObject }
  | { kind: 'entry'; resource: FhirObject; index: number }
  | { kind: 'external'; type?: string; id?: string }
  | { kind: 'unresolved' };

const RELATIVE = /(?:^|\/)([A-Z][A-Za-z]{1,63})\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[A-Za-z0-9\-.]{1,64})?$/;

/** What `reference` (a Reference.reference) names, seen from `root` (the resource holding it) in `bundle`. */
export function resolveReference(reference: string, root: FhirObject, bundle: BundleIndex | undefined): Resolved {
  if (reference.startsWith('#')) {
    const id = reference.slice(1);
    const found = (Array.isArray(root.contained) ? root.contained : []).find((r) => isObject(r) && r.id === id);
    return isObject(found) ? { kind: 'contained', resource: found } : { kind: 'unresolved' };
  }
  const exact = bundle?.byKey.get(reference);
  if (exact) return { kind: 'entry', ...exact };
  const relative = RELATIVE.exec(reference);
  if (relative) {
    const inBundle = bundle?.byKey.get(`${relative[1]}/${relative[2]}`);
    if (inBundle) return { kind: 'entry', ...inBundle };
    return { kind: 'external', type: relative[1], id: relative[2] };
  }
  return reference.startsWith('urn:') ? { kind: 'unresolved' } : { kind: 'external' };
}
