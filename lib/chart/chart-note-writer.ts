/**
 * Intake's writes of notes to the chart table (docs/write-authority.md; the layout:
 * chart-store.ts): a note only where none has its id, and a new version of a partner's own note.
 * With the reads of one patient or record (ChartItemReader). What HL7 intake and the route of a
 * held record bundle: none of ChartReader's pages nor ChartStore's other writes, the Scan or
 * BatchWriteItem (issue 31 item 5: a class is bundled whole). ChartStore delegates these writes here.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '../aws/attribute-values';
import { isConditionalCheckFailed } from '../aws/dependency-calls';
import { ChartItemReader } from './chart-reader';
import { chartItem, patientPk } from './chart-items';
import type { Note } from './types';

export class ChartNoteWriter extends ChartItemReader {
  getNote(patientId: string, noteId: string): Promise<Note | undefined> {
    return this.getRecord(patientId, 'note', noteId);
  }

  /**
   * Intake's note write (docs/write-authority.md): the note is written only when no note has its id
   * under the patient. False when one has (nothing written). Never an unconditional put.
   */
  async putNoteIfAbsent(note: Note): Promise<boolean> {
    const Item = chartItem({ kind: 'note', record: note });
    try {
      await this.call(() => this.db.send(new PutItemCommand({ TableName: this.table, Item, ConditionExpression: 'attribute_not_exists(pk)' })));
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /**
   * A new version of a partner's own note: the stored version is first copied to
   * `NOTEVERSION#<noteId>#<version>` (kept, outside the timeline), then the note is replaced on
   * condition that it still is that version and belongs to `partnerId`. False when there is no note of
   * that partner with this id, or another write came first (nothing replaced).
   */
  async replacePartnerNote(note: Note, partnerId: string): Promise<boolean> {
    const stored = await this.getNote(note.patientId, note.noteId);
    if (!stored || stored.provenance?.partnerId !== partnerId) return false;
    const previous = stored.version ?? 1;
    const copy = marshall(
      { pk: patientPk(note.patientId), sk: `NOTEVERSION#${note.noteId}#${String(previous).padStart(6, '0')}`, kind: 'note-version', record: stored },
      { removeUndefinedValues: true },
    );
    await this.call(() => this.db.send(new PutItemCommand({ TableName: this.table, Item: copy })));
    const Item = chartItem({ kind: 'note', record: { ...note, version: previous + 1 } });
    try {
      await this.call(() =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item,
            ConditionExpression:
              'attribute_exists(pk) AND #record.#provenance.#partnerId = :partnerId AND (#record.#version = :version OR attribute_not_exists(#record.#version))',
            ExpressionAttributeNames: { '#record': 'record', '#provenance': 'provenance', '#partnerId': 'partnerId', '#version': 'version' },
            ExpressionAttributeValues: { ':partnerId': { S: partnerId }, ':version': { N: String(previous) } },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
