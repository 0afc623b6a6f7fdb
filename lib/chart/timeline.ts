/**
 * The one merge of a patient's chart records and lab results into a single newest-first timeline,
 * shared by the HL7 patient summary (lib/hl7/patient-summary-message.ts), the summary export and
 * FHIR $everything (lib/exports). Pure, no imports: lib/hl7 and lib/fhir may use it.
 *
 * Both inputs are newest first; the merge is stable: a lab result goes before a chart record only
 * when strictly newer, and a time that does not parse never counts as newer.
 */
export type TimelineEntry<R, L> = { kind: 'record'; record: R; index: number } | { kind: 'lab'; lab: L; index: number };

export function mergeNewestFirst<R, L>(
  records: readonly R[],
  recordTime: (record: R) => string,
  labs: readonly L[],
  labTime: (lab: L) => string,
): Array<TimelineEntry<R, L>> {
  const recordTimes = records.map((record) => Date.parse(recordTime(record)));
  const labTimes = labs.map((lab) => Date.parse(labTime(lab)));
  const merged: Array<TimelineEntry<R, L>> = [];
  let r = 0;
  let l = 0;
  while (r < records.length || l < labs.length) {
    if (l < labs.length && (r >= records.length || labTimes[l]! > recordTimes[r]!)) {
      merged.push({ kind: 'lab', lab: labs[l]!, index: l });
      l += 1;
    } else {
      merged.push({ kind: 'record', record: records[r]!, index: r });
      r += 1;
    }
  }
  return merged;
}
