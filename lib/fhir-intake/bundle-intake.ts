/**
 * POST /fhir: the Bundle rules of FHIR intake (docs/fhir.md "Intake"): a `transaction` or `batch` of
 * POSTed entries (at most MAX_BUNDLE_ENTRIES), each prepared by its resource type's preparer
 * (receive-fhir.ts) with the Bundle's entries to resolve references against; a transaction is
 * refused whole, before its first write, when any entry is refused; the answer is a
 * transaction-response / batch-response Bundle. Only the Bundle function bundles this module (its
 * wiring gives it as `bundleIntake`); the single-resource routes cannot run it.
 */
import { indexBundle, isObject, type FhirObject } from './references';
import {
  EntryRefusal,
  auditOf,
  informationOutcome,
  prepareEntry,
  refusalAnswer,
  storedText,
  type EntryOutcome,
  type FhirIntakeAnswer,
  type FhirIntakeDependencies,
  type FhirIntakeInput,
  type PreparedEntry,
} from './receive-fhir';

/** Entries of one Bundle (bounded work: each may be a report with up to 200 Observations). */
export const MAX_BUNDLE_ENTRIES = 100;

const STATUS_TEXT: Record<number, string> = { 400: '400 Bad Request', 403: '403 Forbidden', 409: '409 Conflict', 413: '413 Payload Too Large' };

interface EntryRequest {
  resource: FhirObject;
  index: number;
}

/** Bundle.type and entry.request rules (transaction / batch of POSTs). */
function bundleEntries(bundle: FhirObject): { type: 'transaction' | 'batch'; entries: EntryRequest[]; refusals: Map<number, EntryRefusal> } {
  const type = bundle.type;
  if (type !== 'transaction' && type !== 'batch')
    throw new EntryRefusal(400, [
      { expression: 'Bundle.type', message: 'must be transaction or batch (this endpoint processes Bundles, it does not store them)' },
    ]);
  const raw = Array.isArray(bundle.entry) ? bundle.entry : [];
  if (raw.length === 0) throw new EntryRefusal(400, [{ expression: 'Bundle.entry', message: 'is required: at least one entry' }]);
  if (raw.length > MAX_BUNDLE_ENTRIES)
    throw new EntryRefusal(400, [{ expression: 'Bundle.entry', message: `at most ${MAX_BUNDLE_ENTRIES} entries (send several Bundles)` }]);
  const entries: EntryRequest[] = [];
  const refusals = new Map<number, EntryRefusal>();
  raw.forEach((entry, index) => {
    const at = `Bundle.entry[${index}]`;
    const e = entry as FhirObject;
    const request = isObject(e.request) ? e.request : undefined;
    const resource = isObject(e.resource) ? e.resource : undefined;
    if (!resource) refusals.set(index, new EntryRefusal(400, [{ expression: `${at}.resource`, message: 'is required' }]));
    else if (!request) refusals.set(index, new EntryRefusal(400, [{ expression: `${at}.request`, message: `is required in a ${type}` }]));
    else if (request.method !== 'POST')
      refusals.set(index, new EntryRefusal(400, [{ expression: `${at}.request.method`, message: 'only POST (create) is taken by this endpoint' }]));
    else if (typeof request.url !== 'string' || request.url.split('?')[0] !== resource.resourceType)
      refusals.set(
        index,
        new EntryRefusal(400, [{ expression: `${at}.request.url`, message: 'must be the resource type of the entry (e.g. DiagnosticReport)' }]),
      );
    else entries.push({ resource, index });
  });
  return { type, entries, refusals };
}

function entryResponse(outcome: EntryOutcome, requestId: string): FhirObject {
  if (!outcome.ok)
    return {
      response: { status: STATUS_TEXT[outcome.refusal.status]!, outcome: refusalAnswer(outcome.refusal, requestId).body },
    };
  // a form packet has no FHIR read (no location), so without its packetId a Bundle's sender could not ask about it
  const text = outcome.note ?? storedText(outcome);
  return {
    response: {
      status: outcome.status,
      ...(outcome.location ? { location: outcome.location } : {}),
      ...(text ? { outcome: informationOutcome(text, requestId) } : {}),
    },
  };
}

/** Answers a Bundle (its structure already checked, its idempotency claimed by receiveFhir). */
export async function answerBundle(input: FhirIntakeInput, body: FhirObject, deps: FhirIntakeDependencies, sourceMessageId: string): Promise<FhirIntakeAnswer> {
  let plan: ReturnType<typeof bundleEntries>;
  try {
    plan = bundleEntries(body);
  } catch (error) {
    if (error instanceof EntryRefusal)
      return { ...refusalAnswer(error, input.requestId), replayed: false, audit: auditOf(input, [{ ok: false, refusal: error }]) };
    throw error;
  }
  const index = indexBundle(Array.isArray(body.entry) ? (body.entry as FhirObject[]) : []);
  const prepared = new Map<number, PreparedEntry>();
  const outcomes = new Map<number, EntryOutcome>();
  for (const [i, refusal] of plan.refusals) outcomes.set(i, { ok: false, refusal });
  for (const entry of plan.entries) {
    try {
      prepared.set(
        entry.index,
        await prepareEntry(entry.resource, { index: entry.index, path: `Bundle.entry[${entry.index}].resource`, bundle: index }, input, deps),
      );
    } catch (error) {
      if (!(error instanceof EntryRefusal)) throw error;
      outcomes.set(entry.index, { ok: false, refusal: error });
    }
  }
  if (plan.type === 'transaction') {
    const refused = [...outcomes.values()].filter((o): o is Extract<EntryOutcome, { ok: false }> => !o.ok);
    // a form submission id used before with other content is found before the first write (the replay path of the form intake writes nothing)
    if (refused.length === 0) {
      for (const entry of prepared.values()) {
        const refusal = await entry.refusalBeforeWrite?.();
        if (refusal) refused.push({ ok: false, refusal });
      }
    }
    if (refused.length > 0) {
      const status = refused.some((r) => r.refusal.status === 403)
        ? 403
        : refused.some((r) => r.refusal.status === 409)
          ? 409
          : refused.some((r) => r.refusal.status === 413)
            ? 413
            : 400;
      const refusal = new EntryRefusal(
        status as 400 | 403 | 409 | 413,
        refused.flatMap((r) => r.refusal.issues),
      );
      return { ...refusalAnswer(refusal, input.requestId), replayed: false, audit: auditOf(input, refused) };
    }
  }
  for (const [i, entry] of [...prepared.entries()].sort(([a], [b]) => a - b)) {
    try {
      outcomes.set(i, await entry.write(sourceMessageId));
    } catch (error) {
      if (!(error instanceof EntryRefusal)) throw error;
      outcomes.set(i, { ok: false, refusal: error });
    }
  }
  const ordered = [...outcomes.entries()].sort(([a], [b]) => a - b).map(([, o]) => o);
  return {
    status: 200,
    body: { resourceType: 'Bundle', type: `${plan.type}-response`, entry: ordered.map((o) => entryResponse(o, input.requestId)) },
    replayed: false,
    audit: auditOf(input, ordered),
  };
}
