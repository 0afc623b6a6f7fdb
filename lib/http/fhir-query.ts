/**
 * The query of a FHIR search route (`_count`, `_page_token`, `patient`, `category`, `code`, `date`,
 * `identifier`, `_id`): parsed and checked, one error per bad value. Reads take no parameter
 * (lib/http/fhir.ts rejectFhirQueryParameters) and do not bundle this.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { parseDateCondition, parseTokenList, type DateCondition, type TokenValue } from '../fhir/search-params';
import { queryValues, unsupportedParameterErrors } from './fhir';
import { HttpProblem, type FieldError } from './problem';

export const FHIR_COUNT = { min: 1, max: 200, fallback: 20 } as const;

export interface FhirQuery {
  count: number;
  pageToken?: string;
  /** the `patient` parameter's id (`Patient/` prefix removed), when the route takes one */
  patient?: string;
  /** `category` / `code`: an OR list of tokens (lib/fhir/search-params.ts) */
  category?: TokenValue[];
  code?: TokenValue[];
  /** `date`, each repetition a condition (AND); empty when not sent */
  date: DateCondition[];
  /** `identifier`: one `system|value` token */
  identifier?: { system: string; value: string };
  /** `_id`: an OR list of logical ids */
  ids?: string[];
  /** the search parameters as sent (name, value), in the route's order: what `self` and `next` links repeat */
  search: Array<[string, string]>;
}

/** Parameters a FHIR route may accept besides `_format`. */
export type FhirParameter = '_count' | '_page_token' | 'patient' | 'category' | 'code' | 'date' | 'identifier' | '_id';

const MAX_DATE_CONDITIONS = 4;
const MAX_IDS = 10;
const LOGICAL_ID = /^[A-Za-z0-9\-.]{1,800}$/;

const MAX_TOKEN_LENGTH = 1024;

/**
 * Reads the query of a FHIR route. `accepted` lists the parameters this route understands besides
 * `_format`; an unknown parameter is a 400 (a filter the server would silently ignore could hand a
 * partner more than it asked for). `patient` is required when accepted.
 */
export function readFhirQuery(event: APIGatewayProxyEvent, accepted: readonly FhirParameter[]): FhirQuery {
  return readQuery(event, accepted, readSearchParameters);
}

/**
 * {@link readFhirQuery} for a route that pages and takes at most `patient` (`$everything`, the Encounter
 * and DocumentReference searches): the same answers, without the search-parameter parsers in its bundle.
 */
export function readFhirPagingQuery(event: APIGatewayProxyEvent, accepted: ReadonlyArray<'_count' | '_page_token' | 'patient'>): FhirQuery {
  return readQuery(event, accepted);
}

/** The search parameters' reader: passed in, so that a paging route's bundle does not carry it. */
type SearchParameterReader = typeof readSearchParameters;

function readQuery(event: APIGatewayProxyEvent, accepted: readonly FhirParameter[], readSearch?: SearchParameterReader): FhirQuery {
  const errors: FieldError[] = unsupportedParameterErrors(event, new Set<string>([...accepted, '_format']));
  const single = (name: string): string | undefined => {
    const list = [...new Set(queryValues(event, name))];
    if (list.length > 1) {
      errors.push({ parameter: name, message: 'must be sent once' });
      return undefined;
    }
    return list[0];
  };
  const query: FhirQuery = { count: FHIR_COUNT.fallback, date: [], search: [] };
  if (accepted.includes('_count')) {
    const raw = single('_count');
    if (raw !== undefined) {
      const value = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
      if (!(value >= FHIR_COUNT.min && value <= FHIR_COUNT.max))
        errors.push({ parameter: '_count', message: `must be an integer from ${FHIR_COUNT.min} to ${FHIR_COUNT.max}` });
      else query.count = value;
    }
  }
  if (accepted.includes('_page_token')) {
    const raw = single('_page_token');
    if (raw !== undefined) {
      if (raw === '' || raw.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(raw))
        errors.push({ parameter: '_page_token', message: 'is not a page token this server issued' });
      else query.pageToken = raw;
    }
  }
  if (accepted.includes('patient')) {
    const raw = single('patient');
    if (raw === undefined || raw === '') errors.push({ parameter: 'patient', message: 'is required (a Patient id, or Patient/<id>)' });
    else {
      const id = raw.startsWith('Patient/') ? raw.slice('Patient/'.length) : raw;
      if (!/^[A-Za-z0-9\-.]{1,800}$/.test(id))
        errors.push({ parameter: 'patient', message: 'must be a Patient id (letters, digits, "-" and ".") or Patient/<id>' });
      else {
        query.patient = id;
        query.search.push(['patient', raw]);
      }
    }
  }
  readSearch?.(event, accepted, query, errors, single);
  if (errors.length > 0) throw new HttpProblem('validation', 'query parameters are missing or invalid', { errors });
  return query;
}

/** category, code, date, identifier, _id: parsed into `query`, one error per bad value. */
function readSearchParameters(
  event: APIGatewayProxyEvent,
  accepted: readonly FhirParameter[],
  query: FhirQuery,
  errors: FieldError[],
  single: (name: string) => string | undefined,
): void {
  for (const name of ['category', 'code'] as const) {
    if (!accepted.includes(name)) continue;
    const raw = single(name);
    if (raw === undefined) continue;
    const parsed = parseTokenList(raw);
    if (!parsed.ok) errors.push({ parameter: name, message: parsed.message });
    else {
      query[name] = parsed.value;
      query.search.push([name, raw]);
    }
  }
  if (accepted.includes('date')) {
    const values = queryValues(event, 'date');
    if (values.length > MAX_DATE_CONDITIONS) errors.push({ parameter: 'date', message: `may be sent at most ${MAX_DATE_CONDITIONS} times` });
    else
      for (const raw of values) {
        const parsed = parseDateCondition(raw);
        if (!parsed.ok) errors.push({ parameter: 'date', message: parsed.message });
        else {
          query.date.push(parsed.value);
          query.search.push(['date', raw]);
        }
      }
  }
  if (accepted.includes('identifier')) {
    const raw = single('identifier');
    if (raw !== undefined) {
      const parsed = parseTokenList(raw);
      const token = parsed.ok && parsed.value.length === 1 ? parsed.value[0]! : undefined;
      if (!token || token.system === undefined || token.system === '' || token.code === undefined)
        errors.push({
          parameter: 'identifier',
          message: 'must be one system|value (the system is the Patient identifier system, e.g. urn:interop:mrn:<authority>)',
        });
      else {
        query.identifier = { system: token.system, value: token.code };
        query.search.push(['identifier', raw]);
      }
    }
  }
  if (accepted.includes('_id')) {
    const raw = single('_id');
    if (raw !== undefined) {
      const ids = [...new Set(raw.split(','))];
      if (ids.length > MAX_IDS || !ids.every((id) => LOGICAL_ID.test(id)))
        errors.push({ parameter: '_id', message: `must be 1 to ${MAX_IDS} comma-separated ids (letters, digits, "-" and ".")` });
      else {
        query.ids = ids;
        query.search.push(['_id', raw]);
      }
    }
  }
}
