// TEMPORARY placeholder until helper-3's module lands (not committed)
import type { Note, Patient } from './types';
export function checkPatientValues(_p: Partial<Patient>, _now: Date): Array<{ path: string; message: string }> {
  return [];
}
export function checkNoteValues(_n: Partial<Note>, _now: Date): Array<{ path: string; message: string }> {
  return [];
}
