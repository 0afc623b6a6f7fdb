/**
 * Measurement 4's inputs and the peers' layout, shared by the parent (bench/hl7-throughput.ts, which
 * computes the expected output with the source under tsx) and the bundled child
 * (bench/hl7-throughput-child.ts, which times the bundle under plain node). No peer library here, so the
 * parent (and jest) never load them.
 */
import type { Assessment, ChartRecord, Encounter, Note } from '../lib/chart/types';
import type { LabResultSummary, NoteMessageInput, PatientSummaryMessageInput } from '../lib/hl7';
import * as fx from '../test/hl7/chart-fixtures';

/** The note message of test/hl7/chart-fixtures.ts with its encounter (expected output: test/hl7/fixtures/mdm-t02-note.hl7). */
export function noteInput(): NoteMessageInput {
  return { header: fx.header, patient: fx.patient, note: fx.note, encounter: fx.encounter };
}

/** A patient summary of `total` records: three quarters chart records (notes, assessments, encounters), one quarter lab results. */
export function summaryInput(total: number): Omit<PatientSummaryMessageInput, 'style'> {
  const records: ChartRecord[] = [];
  const labResults: LabResultSummary[] = [];
  const labCount = Math.floor(total / 4);
  const base = Date.parse('2024-04-30T17:00:00Z');
  for (let i = 0; i < total - labCount; i++) {
    const at = new Date(base - i * 3_600_000 * 7).toISOString();
    switch (i % 3) {
      case 0: {
        const note: Note = { ...fx.note, noteId: `note-${i}`, createdAt: at, encounterId: undefined };
        records.push({ kind: 'note', at, record: note });
        break;
      }
      case 1: {
        const assessment: Assessment = { ...fx.assessment, assessmentId: `asm-${i}`, performedAt: at, encounterId: undefined };
        records.push({ kind: 'assessment', at, record: assessment });
        break;
      }
      default: {
        const encounter: Encounter = { ...fx.encounter, encounterId: `enc-${i}`, admitAt: at, dischargeAt: undefined };
        records.push({ kind: 'encounter', at, record: encounter });
      }
    }
  }
  for (let i = 0; i < labCount; i++) {
    labResults.push({
      ...fx.labResult,
      resultId: `res-${i}`,
      accessionNumber: `ACC-${i}`,
      resultedAt: new Date(base - i * 3_600_000 * 29 - 1_800_000).toISOString(),
    });
  }
  return { header: fx.header, patient: fx.patient, records, labResults };
}

/** segment -> fields (index 0 = field 1; MSH: index 0 = MSH-2) -> repetitions -> components -> subcomponents */
export type Layout = Array<{ name: string; fields: string[][][][] }>;

const UNESCAPES: Record<string, string> = { F: '|', S: '^', T: '&', R: '~', E: '\\', '.br': '\n' };

function unescapeLeaf(text: string): string {
  return text.replace(/\\([^\\]*)\\/g, (whole, body: string) => UNESCAPES[body] ?? whole);
}

/** Our message as a layout of raw (unescaped) values: what the peers build from. */
export function layoutOf(message: string): Layout {
  return message
    .split('\r')
    .filter((s) => s !== '')
    .map((segment) => {
      const parts = segment.split('|');
      const name = parts[0]!;
      const fields = parts.slice(1).map((field, i) => {
        if (name === 'MSH' && i === 0) return [[[field]]]; // MSH-2, the encoding characters, as is
        return field.split('~').map((rep) => rep.split('^').map((comp) => comp.split('&').map(unescapeLeaf)));
      });
      return { name, fields };
    });
}
