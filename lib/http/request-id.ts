import { randomUUID } from 'node:crypto';

/** 1-128 visible ASCII characters (0x21-0x7E). */
const valid = /^[\x21-\x7e]{1,128}$/;

export function isValidRequestId(value: string): boolean {
  return valid.test(value);
}

export function newRequestId(): string {
  return randomUUID();
}
