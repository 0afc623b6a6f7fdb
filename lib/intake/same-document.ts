/**
 * Whether two notes are the same partner document (a resend of it, or a held copy routed after the
 * document was filed): the same text, author, status and authenticator, and the same creation and
 * authentication instants. Times are compared as instants: a note stored before partner note times
 * kept the sender's offset (UTC, `2024-03-05T09:00:00.000Z`) is the same document as one stored with
 * them (`2024-03-05T04:00:00-05:00`). Shared by MDM intake (TXA-12 reused) and the held-record route.
 */
import type { Note } from '../chart/types';

function instant(time: string | undefined): number | string | null {
  if (time === undefined) return null;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? time : ms;
}

/** The content two notes are compared on (times as instants): the input of the document number register's fingerprint. */
export function documentContent(note: Pick<Note, 'text' | 'author' | 'createdAt' | 'completionStatus' | 'authenticatedBy' | 'authenticatedAt'>): string {
  return JSON.stringify([
    note.text,
    note.author,
    instant(note.createdAt),
    note.completionStatus ?? null,
    note.authenticatedBy ?? null,
    instant(note.authenticatedAt),
  ]);
}

export function sameDocument(a: Note, b: Note): boolean {
  return documentContent(a) === documentContent(b);
}
