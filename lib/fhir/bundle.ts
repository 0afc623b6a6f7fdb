/** Search results as a FHIR R4 `searchset` Bundle with `self` and `next` links. Pure. */
import type { Bundle, BundleLink, Resource } from '@medplum/fhirtypes';
import { nonEmpty } from './text';

export interface SearchsetInput {
  /** absolute base of the FHIR endpoints, e.g. https://api.example.com/prod/fhir */
  baseUrl: string;
  /** the request as a URL relative to the base, e.g. `Encounter?patient=p1&_count=20` */
  selfPath: string;
  /** the next page relative to the base, when there is one */
  nextPath?: string;
  resources: Resource[];
  /** when the bundle was assembled (Bundle.timestamp and meta.lastUpdated) */
  now: Date;
  /** total matches, only when known exactly without reading them all */
  total?: number;
}

export function searchsetBundle(input: SearchsetInput): Bundle {
  const link: BundleLink[] = [{ relation: 'self', url: `${input.baseUrl}/${input.selfPath}` }];
  if (input.nextPath) link.push({ relation: 'next', url: `${input.baseUrl}/${input.nextPath}` });
  const timestamp = input.now.toISOString();
  return {
    resourceType: 'Bundle',
    meta: { lastUpdated: timestamp },
    type: 'searchset',
    timestamp,
    ...(input.total !== undefined ? { total: input.total } : {}),
    link,
    // FHIR JSON has no empty arrays: a page without matches has no `entry`
    ...nonEmpty(
      'entry',
      input.resources.map((resource) => ({
        fullUrl: `${input.baseUrl}/${resource.resourceType}/${resource.id}`,
        resource,
        search: { mode: 'match' as const },
      })),
    ),
  };
}
