/**
 * Independent HL7 parsers for the round-trip tests, and a tiny unescape of our own for @medplum/core
 * (which does not unescape). Nothing here comes from lib/hl7.
 *
 * `hl7v2` 1.8.0 is an ES module. Jest runs the tests as CommonJS through its own module registry, which
 * cannot load ES modules without --experimental-vm-modules; Node's own `require` can (Node >= 20.19
 * loads synchronous ES modules with require), so the package is loaded through `createRequire`.
 */
import { Hl7Message as MedplumHl7Message } from '@medplum/core';
import type * as Hl7v2Module from 'hl7v2';

// Jest replaces `require('node:module')` with its own module registry; `process.getBuiltinModule`
// returns Node's real one.
const requireNative = process.getBuiltinModule('node:module').createRequire(__filename);
const hl7v2 = requireNative('hl7v2') as typeof Hl7v2Module;

/** Where a value sits: 1-based field/component/subcomponent as in HL7 (`PID-11.1.1`), 0-based repetition. */
export interface ValueAddress {
  segment: string;
  /** 0-based among the segments of that name (default 0) */
  occurrence?: number;
  field: number;
  component?: number;
  subcomponent?: number;
  repetition?: number;
}

export function describeAddress(address: ValueAddress): string {
  const parts = [`${address.segment}[${address.occurrence ?? 0}]-${address.field}`];
  if (address.component !== undefined) parts.push(`.${address.component}`);
  if (address.subcomponent !== undefined) parts.push(`.${address.subcomponent}`);
  if (address.repetition !== undefined) parts.push(`(rep ${address.repetition})`);
  return parts.join('');
}

/**
 * HL7 unescape, written independently of the encoder: the delimiter escapes and the `\.br\` line break
 * (returned as LF). Any other escape sequence is an error: the encoder must not write one.
 */
export function unescapeHl7(text: string): string {
  return text.replace(/\\([^\\]*)\\/g, (sequence, body: string) => {
    switch (body) {
      case 'F':
        return '|';
      case 'S':
        return '^';
      case 'T':
        return '&';
      case 'R':
        return '~';
      case 'E':
        return '\\';
      case '.br':
        return '\n';
      default:
        throw new Error(`unexpected escape sequence ${sequence}`);
    }
  });
}

/** A parsed message that answers value look-ups. */
export interface ParsedMessage {
  segmentNames: string[];
  value(address: ValueAddress): string;
}

export function parseWithMedplum(text: string): ParsedMessage {
  const message = MedplumHl7Message.parse(text);
  // Medplum splits on the segment terminator and keeps the empty text after the last CR as a segment
  // without a name; a message ends with CR, so that one is not a segment.
  const segments = message.segments.filter((segment, index) => !(index === message.segments.length - 1 && segment.name === ''));
  return {
    segmentNames: segments.map((segment) => segment.name),
    value(address) {
      const segment = message.getAllSegments(address.segment)[address.occurrence ?? 0];
      if (!segment) {
        throw new Error(`medplum: no ${describeAddress(address)}`);
      }
      // getField answers undefined for a field after the last one written (trailing empty fields are not written).
      const field = segment.getField(address.field) as ReturnType<typeof segment.getField> | undefined;
      if (!field) {
        return '';
      }
      const repetition = address.repetition ?? 0;
      let raw: string;
      if (address.component === undefined) {
        raw = field.toString().split('~')[repetition] ?? '';
      } else {
        const component = field.getComponent(address.component, undefined, repetition);
        raw = address.subcomponent === undefined ? component : (component.split('&')[address.subcomponent - 1] ?? '');
      }
      return unescapeHl7(raw);
    },
  };
}

/**
 * hl7v2 1.8.0 decodes escapes with `/\\(\w+)\\/g`: it does not know formatting escapes, and because `.br`
 * is not `\w+` it pairs the backslashes wrongly around one (`\.br\A\.br\` comes back as `\.brA.br\`).
 * Before hl7v2 reads a message, each `\.br\` escape sequence (found by a left-to-right scan of escape
 * sequences, so `\E\.br\E\`, the escaped text `\.br\`, is left alone) is rewritten as `\X0A\`, the
 * same line break as a hex escape, which hl7v2 decodes. Everything else reaches hl7v2 as encoded.
 */
export function lineBreaksAsHexEscapes(text: string): string {
  const rewriteField = (field: string): string => field.replace(/\\[^\\]*\\/g, (sequence) => (sequence === '\\.br\\' ? '\\X0A\\' : sequence));
  return text
    .split('\r')
    .map((segment) =>
      segment
        .split('|')
        // MSH-2 (`^~\&`, the second piece of MSH) holds the escape character itself
        .map((field, index) => (segment.startsWith('MSH|') && index === 1 ? field : rewriteField(field)))
        .join('|'),
    )
    .join('\r');
}

export function parseWithHl7v2(text: string): ParsedMessage {
  // Parsed from UTF-8 bytes, as a partner receiving the message would.
  const message = hl7v2.HL7Message.parse(Buffer.from(lineBreaksAsHexEscapes(text), 'utf8'));
  const segments = message.segments;
  return {
    segmentNames: segments.map((segment) => segment.segmentType),
    value(address) {
      const segment = segments.filter((candidate) => candidate.segmentType === address.segment)[address.occurrence ?? 0];
      if (!segment) {
        throw new Error(`hl7v2: no ${describeAddress(address)}`);
      }
      const field = segment.field(address.field);
      const repetition = address.repetition ?? 0;
      if (repetition >= field.repetitions.length) {
        return '';
      }
      const value: unknown = field.repetition(repetition).getValue(address.component ?? 1, address.subcomponent ?? 1);
      return value === undefined || value === null ? '' : String(value);
    },
  };
}
