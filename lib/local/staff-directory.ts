/**
 * The demo staff of the local OpenID provider (synthetic people; local stack only). Passwords are
 * kept as scrypt hashes with a per-user salt and compared in constant time, as a real directory would.
 */
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { REVIEWER_GROUP } from '../keys/staff-token';

export interface StaffMember {
  /** stable subject id (the `sub` claim) */
  subject: string;
  username: string;
  displayName: string;
  groups: string[];
}

interface StoredMember extends StaffMember {
  salt: Buffer;
  passwordHash: Buffer;
}

export const DEMO_STAFF: ReadonlyArray<StaffMember & { password: string }> = [
  { subject: 'staff-0001', username: 'demo-reviewer', password: 'demo-reviewer-password', displayName: 'Dana Reviewer', groups: [REVIEWER_GROUP] },
  { subject: 'staff-0002', username: 'demo-viewer', password: 'demo-viewer-password', displayName: 'Vic Viewer', groups: [] },
];

const hash = (password: string, salt: Buffer) => scryptSync(password, salt, 32);

export class StaffDirectory {
  private readonly members = new Map<string, StoredMember>();

  constructor(people: ReadonlyArray<StaffMember & { password: string }> = DEMO_STAFF) {
    for (const { password, ...member } of people) {
      const salt = randomBytes(16);
      this.members.set(member.username, { ...member, salt, passwordHash: hash(password, salt) });
    }
  }

  /** The member when the password is right; undefined otherwise (same work either way). */
  authenticate(username: string, password: string): StaffMember | undefined {
    const member = this.members.get(username);
    const salt = member?.salt ?? randomBytes(16);
    const candidate = hash(password, salt);
    if (!member || !timingSafeEqual(candidate, member.passwordHash)) return undefined;
    const { salt: _s, passwordHash: _p, ...public_ } = member;
    return public_;
  }

  bySubject(subject: string): StaffMember | undefined {
    for (const member of this.members.values()) {
      if (member.subject === subject) {
        const { salt: _s, passwordHash: _p, ...public_ } = member;
        return public_;
      }
    }
    return undefined;
  }
}
