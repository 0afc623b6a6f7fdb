import { randomUUID } from 'node:crypto';

/** 1-128 visible ASCII characters (0x21-0x7E). */
export const REQUEST_ID_PATTERN = /^[\x21-\x7e]{1,128}$/;
const valid = REQUEST_ID_PATTERN;

export function isValidRequestId(value: string): boolean {
  return valid.test(value);
}

export function newRequestId(): string {
  return randomUUID();
}
