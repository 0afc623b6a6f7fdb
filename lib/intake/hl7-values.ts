/**
 * Reading HL7 data types into the chart's shapes. Lenient where senders differ (times with or without
 * an offset, seconds or not), strict where a wrong value would be stored as true (a date that is no date
 * is dropped, never guessed).
 */
import type { Address, Clinician, CodedValue, PersonName } from '../chart/types';
import { repetitionsOf, type ParsedSegment } from '../hl7/parser';

const TS = /^(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:\.(\d{1,4}))?([+-]\d{4})?$/;

/**
 * HL7 TS/DTM -> ISO 8601 UTC instant (`YYYY-MM-DDTHH:mm:ss[.fff]Z`). Without an offset the time is read
 * as UTC (documented in docs/hl7-intake.md). Undefined when it is not a real instant.
 */
export function instantFromTs(value: string): string | undefined {
  const m = TS.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', frac, offset] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), frac ? Number((frac + '00').slice(0, 3)) : 0);
  const check = new Date(ms);
  if (Number.isNaN(ms) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59)
    return undefined;
  let shift = 0;
  if (offset) {
    const sign = offset[0] === '-' ? -1 : 1;
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(3, 5));
    if (oh > 14 || om > 59) return undefined;
    shift = sign * (oh * 60 + om) * 60000;
  }
  const utc = new Date(ms - shift);
  if (utc.getUTCFullYear() < 1900) return undefined;
  const iso = utc.toISOString();
  return frac ? iso : iso.replace('.000Z', 'Z');
}

/** HL7 DT (or the date part of a TS) -> `YYYY-MM-DD`; undefined when it is not a real date. */
export function dateFromDt(value: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})/.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d));
  const check = new Date(ms);
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(y) < 1850) return undefined;
  return `${y}-${mo}-${d}`;
}

const present = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' || value === '""' ? undefined : value);

/** Drops undefined properties (the stored JSON stays as the chart import writes it). */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** XPN (family^given^middle^suffix^prefix); family may be a FN with subcomponents (surname first). */
export function personName(components: string[][] | undefined): PersonName | undefined {
  if (!components) return undefined;
  const family = present(components[0]?.[0]);
  if (!family) return undefined;
  return compact({
    family,
    given: present(components[1]?.[0]),
    middle: present(components[2]?.[0]),
    suffix: present(components[3]?.[0]),
    prefix: present(components[4]?.[0]),
  });
}

/** XCN (id^family^given^middle^suffix^prefix). */
export function clinician(components: string[][] | undefined): Clinician | undefined {
  if (!components) return undefined;
  const name = personName(components.slice(1));
  if (!name) return undefined;
  return compact({ id: present(components[0]?.[0]), name });
}

/** CE/CWE (code^text^system). */
export function codedValue(components: string[][] | undefined): CodedValue | undefined {
  if (!components) return undefined;
  const code = present(components[0]?.[0]);
  const display = present(components[1]?.[0]);
  if (!code && !display) return undefined;
  return compact({ code: code ?? display!, display, system: present(components[2]?.[0]) });
}

/** XAD (street^other^city^state^zip^country). */
export function address(components: string[][] | undefined): Address | undefined {
  if (!components) return undefined;
  const value = compact({
    line1: present(components[0]?.[0]),
    line2: present(components[1]?.[0]),
    city: present(components[2]?.[0]),
    state: present(components[3]?.[0]),
    postalCode: present(components[4]?.[0]),
    country: present(components[5]?.[0]),
  });
  return Object.keys(value).length > 0 ? value : undefined;
}

/** PID-13 style XTN repetitions: the phone number (first non-e-mail) and the e-mail (XTN-3 `Internet` or XTN-2 `NET`). */
export function telecoms(segment: ParsedSegment | undefined, field: number): { phone?: string; email?: string } {
  let phone: string | undefined;
  let email: string | undefined;
  for (const rep of repetitionsOf(segment, field)) {
    const use = rep[1]?.[0] ?? '';
    const type = rep[2]?.[0] ?? '';
    if (type.toLowerCase() === 'internet' || use === 'NET') {
      email ??= present(rep[3]?.[0]);
    } else {
      phone ??= present(rep[0]?.[0]) ?? present(rep[11]?.[0]);
    }
  }
  return compact({ phone, email });
}

export { present };
