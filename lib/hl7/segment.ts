import {
  escapeAsciiTextLines,
  type EscapedText,
  escapeText,
  escapeTextLines,
  type TextLinesMeasure,
  NOT_ESCAPED_TEXT,
  plainAsciiExtraJsonBytes,
  scanEscapedText,
} from './escape';
import { jsonStringBytes } from './json-string-bytes';

/** One component: a single escaped value, or its subcomponents (joined by `&`). */
export type Component = EscapedText | readonly EscapedText[];

/** One field repetition: its components (joined by `^`). */
export type Components = readonly Component[];

/** What a field can hold: a single escaped value, or the components of one repetition. */
export type FieldValue = EscapedText | Components;

/**
 * The components of one repetition as RAW values (chart text, not escaped; `undefined` is empty), for
 * {@link Segment.setTextComponents}, which escapes each one ({@link escapeText}) itself.
 */
export type TextComponents = readonly (string | undefined)[];

export const SEGMENT_TERMINATOR = '\r';
export const FIELD_SEPARATOR = '|';
export const COMPONENT_SEPARATOR = '^';
export const REPETITION_SEPARATOR = '~';
export const SUBCOMPONENT_SEPARATOR = '&';
/** MSH-2, exactly as hl7-notes.md requires. */
export const ENCODING_CHARACTERS = '^~\\&';

/** `^[A-Z][A-Z0-9]{2}$`, without a regular expression (a segment is made for every few values). */
function isSegmentName(name: string): boolean {
  if (typeof name !== 'string' || name.length !== 3) {
    return false;
  }
  const first = name.charCodeAt(0);
  return first >= 0x41 && first <= 0x5a && isUpperCaseLetterOrDigit(name.charCodeAt(1)) && isUpperCaseLetterOrDigit(name.charCodeAt(2));
}

function isUpperCaseLetterOrDigit(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39);
}

/** Segments whose field 1 is the field separator and field 2 the encoding characters. */
function isHeaderSegment(name: string): boolean {
  return name === 'MSH' || name === 'FHS' || name === 'BHS';
}

/**
 * `runs[n]` is `separator` repeated n times: the separators owed for n skipped empty items, without
 * building the string each time (PV1-19 after PV1-3 skips 15 fields, OBR-25 after OBR-8 skips 16).
 */
function separatorRuns(separator: string): readonly string[] {
  return Array.from({ length: 64 }, (_, count) => separator.repeat(count));
}
const FIELD_SEPARATOR_RUNS = separatorRuns(FIELD_SEPARATOR);
const COMPONENT_SEPARATOR_RUNS = separatorRuns(COMPONENT_SEPARATOR);
const SUBCOMPONENT_SEPARATOR_RUNS = separatorRuns(SUBCOMPONENT_SEPARATOR);

function separators(runs: readonly string[], count: number): string {
  return runs[count] ?? runs[1]!.repeat(count);
}

/**
 * Checks one value ({@link scanEscapedText}) and returns the scan. A value that skipped escaping is a
 * programming error inside lib/hl7, never a data problem.
 */
function checkValue(value: string, segmentName: string, fieldNumber: number): number {
  const scan = scanEscapedText(value);
  if (scan === NOT_ESCAPED_TEXT) {
    throw new Error(`${segmentName}-${fieldNumber}: value is not escaped HL7 text`);
  }
  return scan;
}

/** Whether a value holds text outside ASCII, from its scan (NaN comes only with a surrogate). */
function isNonAscii(scan: number): boolean {
  return scan !== scan || (scan & 1) === 1;
}

/** The bytes a value takes inside a JSON string beyond its length, from its scan (NaN: not countable alone). */
function extraJsonBytes(scan: number): number {
  return (scan - (scan & 1)) / 2;
}

/**
 * Serializes one field while it is set, so each value is validated and written exactly once. Every
 * value is checked ({@link scanEscapedText}) in the same pass; `nonAscii` records whether any value
 * holds text outside ASCII (for MSH-18), `extraJsonBytes` what the values take inside a JSON string
 * beyond their length (for the size budgets; NaN when it must be counted on the whole text).
 *
 * One writer serves every field ({@link fieldWriter}): a field is written in one synchronous call that
 * never writes another field meanwhile, so the summary's thousands of fields allocate no writer.
 */
class FieldWriter {
  nonAscii = false;
  extraJsonBytes = 0;
  segmentName = '';
  fieldNumber = 0;

  /** A value, checked ({@link checkValue}). */
  value(value: string): string {
    if (value !== '') {
      const scan = checkValue(value, this.segmentName, this.fieldNumber);
      if (scan !== 0) {
        this.nonAscii ||= isNonAscii(scan);
        this.extraJsonBytes += extraJsonBytes(scan);
      }
    }
    return value;
  }

  /*
   * component() and repetition() join their items without the trailing empty ones, in one pass with no
   * array: `written` is the index of the last non-empty item in `out` (= the separators `out` holds), and
   * the separators before an item are only written once a non-empty item follows them.
   */

  component(component: Component): string {
    if (typeof component === 'string') {
      return this.value(component);
    }
    const subcomponents = component as readonly EscapedText[];
    let out = '';
    let written = 0;
    for (let index = 0; index < subcomponents.length; index += 1) {
      const text = this.value(subcomponents[index]!);
      if (text !== '') {
        out += index === written ? text : separators(SUBCOMPONENT_SEPARATOR_RUNS, index - written) + text;
        written = index;
      }
    }
    return out;
  }

  repetition(components: Components): string {
    let out = '';
    let written = 0;
    for (let index = 0; index < components.length; index += 1) {
      const text = this.component(components[index]!);
      if (text !== '') {
        out += index === written ? text : separators(COMPONENT_SEPARATOR_RUNS, index - written) + text;
        written = index;
      }
    }
    return out;
  }
}

/**
 * What {@link Segment.setTextComponents} wrote into a field (its text, one repetition, and how many components
 * it holds), for {@link Segment.setExtendedCopy} of that field: the components are not counted again.
 */
export interface WrittenComponents {
  text: string;
  components: number;
}

const FIELD_WRITER = new FieldWriter();

/** The field writer, ready for field `fieldNumber` of segment `segmentName` (read its measures right after writing). */
function fieldWriter(segmentName: string, fieldNumber: number): FieldWriter {
  const writer = FIELD_WRITER;
  writer.segmentName = segmentName;
  writer.fieldNumber = fieldNumber;
  writer.nonAscii = false;
  writer.extraJsonBytes = 0;
  return writer;
}

/** {@link Segment.setTextLines}'s scratch measure (synchronous: read right after each scan). */
const TEXT_LINES_MEASURE: TextLinesMeasure = { extraJsonBytes: 0, hasText: false };

/** Room for the fields of most segments (PID-22, TXA-22, OBR-25) at once, so the array is not grown field by field. */
const FIELDS_CAPACITY = 26;

/**
 * A field value checked once, when it is made ({@link Segment.checkedField}): the constants every
 * message writes (set ids, MSH-11/12, table codes), set with {@link Segment.setChecked} without checking
 * and measuring the same text again for each message. Immutable.
 */
export interface CheckedField {
  readonly text: string;
  readonly nonAscii: boolean;
  readonly extraJsonBytes: number;
}

/**
 * One HL7 segment. Fields are addressed 1-based as in the standard (`PID-3` is `set(3, ...)`).
 * For MSH, fields 1 (field separator) and 2 (encoding characters) are fixed and field 3 is the first
 * settable one, so `MSH-9` is `set(9, ...)` there too.
 *
 * Every value is escaped: either given escaped ({@link EscapedText}, checked at run time as well, so a
 * value can never add a field, component, repetition or segment), or given RAW to {@link setText} /
 * {@link setTextComponents} / {@link setTextLines} (TX), which escape it themselves ({@link escapeText},
 * {@link escapeTextLines}) in the same scan as the check. Constants are checked once ({@link checkedField}); copies take text already checked.
 *
 * Performance: a field is serialized once, when it is set, and kept as text. Fields are mostly set in
 * order, so the segment's text grows as they are set (a field after the last one written is appended to
 * it); a field set at or before the last one written drops the text, which {@link toString} builds again
 * from the fields. The JSON size is a running sum of what the checks measured.
 */
export class Segment {
  readonly name: string;
  /** index = field number; the field's serialized text (all repetitions), `''` or a hole when empty */
  private readonly fields: string[] = new Array<string>(FIELDS_CAPACITY);
  /** the fields holding text outside ASCII; created for the few segments that have one */
  private nonAsciiFields: Set<number> | undefined;
  /** index = field number: what the field's values take inside a JSON string beyond their length (NaN: not countable alone); created for the first field that takes more */
  private fieldExtraJsonBytes: number[] | undefined;
  /** the sum of {@link fieldExtraJsonBytes} (NaN when one of them is) */
  private extraJsonBytesTotal = 0;
  /** {@link toString}; `undefined` after a field at or before {@link written} changed, until toString builds it again */
  private text: string | undefined;
  /** the last field {@link text} holds (`firstSettableField - 1` while none has text) */
  private written: number;
  /** 3 for MSH, FHS and BHS (fields 1 and 2 are the delimiters), else 1 */
  private readonly firstSettableField: number;

  constructor(name: string) {
    if (!isSegmentName(name)) {
      throw new Error(`invalid segment name ${JSON.stringify(name)}`);
    }
    this.name = name;
    const header = isHeaderSegment(name);
    this.firstSettableField = header ? 3 : 1;
    // MSH: the encoding characters are MSH-2; other segments: the name stands at field 0
    this.text = header ? name + FIELD_SEPARATOR + ENCODING_CHARACTERS : name;
    this.written = this.firstSettableField - 1;
  }

  /** Sets field `fieldNumber` to one value (one repetition). An empty value clears the field. */
  set(fieldNumber: number, value: FieldValue): this {
    this.assertSettable(fieldNumber);
    if (typeof value === 'string') {
      // the common case, a single value: no FieldWriter needed
      const scan = checkValue(value, this.name, fieldNumber);
      return this.store(fieldNumber, value, isNonAscii(scan), extraJsonBytes(scan));
    }
    const writer = fieldWriter(this.name, fieldNumber);
    const text = writer.repetition(value as Components);
    return this.store(fieldNumber, text, writer.nonAscii, writer.extraJsonBytes);
  }

  /**
   * Sets field `fieldNumber` to one RAW value (chart text, not escaped), escaped here as {@link escapeText}
   * does and checked in the same scan. `undefined` or an empty value clears the field.
   */
  setText(fieldNumber: number, raw: string | undefined): this {
    this.assertSettable(fieldNumber);
    if (typeof raw === 'string') {
      const extra = plainAsciiExtraJsonBytes(raw);
      if (extra >= 0) {
        return this.store(fieldNumber, raw, false, extra);
      }
    }
    const escaped = escapeText(raw);
    const scan = checkValue(escaped, this.name, fieldNumber);
    return this.store(fieldNumber, escaped, isNonAscii(scan), extraJsonBytes(scan));
  }

  /**
   * Sets field `fieldNumber` to one repetition of RAW components, each escaped here ({@link setText}).
   * `written`, when given, is told what was written (for {@link setExtendedCopy}).
   */
  setTextComponents(fieldNumber: number, components: TextComponents, written?: WrittenComponents): this {
    this.assertSettable(fieldNumber);
    // one pass, state in locals: `last` and the separators as in FieldWriter.repetition
    let out = '';
    let last = 0; // index of the last non-empty component in `out`
    let extra = 0;
    let nonAscii = false;
    for (let index = 0; index < components.length; index += 1) {
      const raw = components[index];
      if (raw === '' || raw === undefined) continue; // empty (most of an XCN): nothing to write or check
      let text: string;
      const plainExtra = typeof raw === 'string' ? plainAsciiExtraJsonBytes(raw) : -1;
      if (plainExtra >= 0) {
        extra += plainExtra;
        text = raw as string;
      } else {
        text = escapeText(raw);
        if (text !== '') {
          const scan = checkValue(text, this.name, fieldNumber);
          nonAscii ||= isNonAscii(scan);
          extra += extraJsonBytes(scan);
        }
      }
      if (text !== '') {
        out += index === last ? text : separators(COMPONENT_SEPARATOR_RUNS, index - last) + text;
        last = index;
      }
    }
    if (written !== undefined) {
      written.text = out;
      written.components = out === '' ? 0 : last + 1;
    }
    return this.store(fieldNumber, out, nonAscii, extra);
  }

  /** Checks a field value once ({@link set}) for {@link setChecked}. */
  static checkedField(value: FieldValue): CheckedField {
    const probe = new Segment('ZZZ').set(1, value);
    return Object.freeze({ text: probe.fields[1]!, nonAscii: probe.hasNonAsciiText(), extraJsonBytes: probe.extraJsonBytesOf(1) });
  }

  /** Sets field `fieldNumber` to a value checked when it was made ({@link checkedField}). */
  setChecked(fieldNumber: number, field: CheckedField): this {
    this.assertSettable(fieldNumber);
    return this.store(fieldNumber, field.text, field.nonAscii, field.extraJsonBytes);
  }

  /** Sets a repeating field: one entry per repetition (joined by `~`). Empty repetitions are dropped. */
  setRepetitions(fieldNumber: number, repetitions: readonly Components[]): this {
    this.assertSettable(fieldNumber);
    const writer = fieldWriter(this.name, fieldNumber);
    let text = '';
    for (const components of repetitions) {
      const repetition = writer.repetition(components);
      if (repetition !== '') {
        text = text === '' ? repetition : text + REPETITION_SEPARATOR + repetition;
      }
    }
    return this.store(fieldNumber, text, writer.nonAscii, writer.extraJsonBytes);
  }

  /**
   * Sets a repeating field of single values, keeping empty repetitions in place (the lines of a TX
   * value: an empty line is a repetition of its own). The field is empty only when every value is.
   */
  setLines(fieldNumber: number, lines: readonly EscapedText[]): this {
    this.assertSettable(fieldNumber);
    const writer = fieldWriter(this.name, fieldNumber);
    let text = '';
    let hasText = false;
    for (let index = 0; index < lines.length; index += 1) {
      const line = writer.value(lines[index]!);
      hasText ||= line !== '';
      text = index === 0 ? line : text + REPETITION_SEPARATOR + line;
    }
    return this.store(fieldNumber, hasText ? text : '', writer.nonAscii, writer.extraJsonBytes);
  }

  /**
   * Sets a TX field from RAW text: {@link escapeTextLines} then {@link setLines}, one repetition per line.
   * ASCII text (the common note) is escaped, joined and measured in one scan ({@link escapeAsciiTextLines},
   * which says why its lines need no second check); any other is escaped, then checked line by line.
   */
  setTextLines(fieldNumber: number, raw: string | undefined): this {
    if (typeof raw === 'string') {
      this.assertSettable(fieldNumber);
      const measure = TEXT_LINES_MEASURE;
      const text = escapeAsciiTextLines(raw, REPETITION_SEPARATOR, measure);
      if (text !== undefined) {
        return this.store(fieldNumber, measure.hasText ? text : '', false, measure.extraJsonBytes);
      }
    }
    return this.setLines(fieldNumber, escapeTextLines(raw));
  }

  /** Sets field `fieldNumber` to the value of field `sourceFieldNumber` (already checked): the same value twice is written once. */
  copyField(fieldNumber: number, sourceFieldNumber: number): this {
    return this.copyFieldFrom(this, fieldNumber, sourceFieldNumber);
  }

  /** Sets field `fieldNumber` to the value of that field (or of `sourceFieldNumber`) in `source`, already checked there. */
  copyFieldFrom(source: Segment, fieldNumber: number, sourceFieldNumber = fieldNumber): this {
    this.assertSettable(fieldNumber);
    source.assertSettable(sourceFieldNumber);
    const nonAscii = source.nonAsciiFields?.has(sourceFieldNumber) ?? false;
    return this.store(fieldNumber, source.fields[sourceFieldNumber] ?? '', nonAscii, source.extraJsonBytesOf(sourceFieldNumber));
  }

  /**
   * Sets field `fieldNumber` to field `sourceFieldNumber` of this segment (one repetition, already
   * checked) with one more component, `value`, at component `componentNumber` after its last: a PPN is an
   * XCN followed by PPN-15 (TXA-22 is TXA-5's person and a time), written without building the person twice.
   * `sourceWritten`: what {@link setTextComponents} wrote into the source field; when the field still holds
   * that text, its components are known and the text is not read again.
   */
  setExtendedCopy(fieldNumber: number, sourceFieldNumber: number, componentNumber: number, value: EscapedText, sourceWritten?: WrittenComponents): this {
    this.assertSettable(fieldNumber);
    this.assertSettable(sourceFieldNumber);
    const source = this.fields[sourceFieldNumber] ?? '';
    let components: number;
    let repeating = false;
    if (sourceWritten !== undefined && sourceWritten.text === source) {
      components = sourceWritten.components; // one repetition, as setTextComponents writes
    } else {
      // components written in the source: one more than its separators (an escaped value holds none)
      components = source === '' ? 0 : 1;
      for (let index = source.indexOf(COMPONENT_SEPARATOR); index !== -1; index = source.indexOf(COMPONENT_SEPARATOR, index + 1)) {
        components += 1;
      }
      repeating = source.includes(REPETITION_SEPARATOR);
    }
    if (repeating || !Number.isInteger(componentNumber) || componentNumber <= components) {
      throw new Error(`${this.name}-${fieldNumber}: component ${componentNumber} does not follow ${this.name}-${sourceFieldNumber}`);
    }
    const scan = checkValue(value, this.name, fieldNumber);
    const text =
      value === ''
        ? source
        : source === ''
          ? separators(COMPONENT_SEPARATOR_RUNS, componentNumber - 1) + value
          : source + separators(COMPONENT_SEPARATOR_RUNS, componentNumber - components) + value;
    const nonAscii = (this.nonAsciiFields?.has(sourceFieldNumber) ?? false) || isNonAscii(scan);
    return this.store(fieldNumber, text, nonAscii, this.extraJsonBytesOf(sourceFieldNumber) + extraJsonBytes(scan));
  }

  private assertSettable(fieldNumber: number): void {
    if (!Number.isInteger(fieldNumber) || fieldNumber < this.firstSettableField) {
      throw new Error(`${this.name}-${fieldNumber} cannot be set`);
    }
  }

  private store(fieldNumber: number, text: string, nonAscii: boolean, extraJsonBytes: number): this {
    this.fields[fieldNumber] = text;
    // most values take nothing more in JSON: the array exists once one does (until then every field's is 0)
    if (extraJsonBytes !== 0 || this.fieldExtraJsonBytes !== undefined) {
      const extras = (this.fieldExtraJsonBytes ??= []);
      const previousExtra = extras[fieldNumber] ?? 0;
      extras[fieldNumber] = extraJsonBytes;
      this.extraJsonBytesTotal += extraJsonBytes - previousExtra;
    }
    if (nonAscii) {
      (this.nonAsciiFields ??= new Set()).add(fieldNumber);
    } else if (this.nonAsciiFields !== undefined) {
      this.nonAsciiFields.delete(fieldNumber);
    }
    const segmentText = this.text;
    if (segmentText !== undefined && fieldNumber > this.written) {
      // after the last field written: appended (an empty field adds nothing: trailing empty fields are not written)
      if (text !== '') {
        this.text = segmentText + separators(FIELD_SEPARATOR_RUNS, fieldNumber - this.written) + text;
        this.written = fieldNumber;
      }
    } else {
      this.text = undefined;
    }
    return this;
  }

  /** What field `fieldNumber`'s values take inside a JSON string beyond their length (NaN: not countable alone). */
  private extraJsonBytesOf(fieldNumber: number): number {
    return this.fieldExtraJsonBytes?.[fieldNumber] ?? 0;
  }

  /** True when a field holds text outside ASCII (what MSH-18 depends on). */
  hasNonAsciiText(): boolean {
    return this.nonAsciiFields !== undefined && this.nonAsciiFields.size > 0;
  }

  /** The serialized text of one field (all repetitions), `''` when empty. For MSH-1/MSH-2 the fixed values. */
  fieldText(fieldNumber: number): string {
    if (isHeaderSegment(this.name) && fieldNumber === 1) {
      return FIELD_SEPARATOR;
    }
    if (isHeaderSegment(this.name) && fieldNumber === 2) {
      return ENCODING_CHARACTERS;
    }
    return this.fields[fieldNumber] ?? '';
  }

  /** The segment without its terminator. Trailing empty fields are not written. */
  toString(): string {
    if (this.text === undefined) {
      const first = this.firstSettableField;
      // `out` ends with field `written` (MSH: the encoding characters are MSH-2; other segments: the
      // name stands at field 0); separators for empty fields are written only once a later field has text
      let out = isHeaderSegment(this.name) ? this.name + FIELD_SEPARATOR + ENCODING_CHARACTERS : this.name;
      let written = first - 1;
      for (let fieldNumber = first; fieldNumber < this.fields.length; fieldNumber += 1) {
        const field = this.fields[fieldNumber];
        if (field) {
          out += separators(FIELD_SEPARATOR_RUNS, fieldNumber - written) + field;
          written = fieldNumber;
        }
      }
      this.text = out;
      this.written = written;
    }
    return this.text;
  }

  /**
   * The bytes the segment and its terminator take inside a JSON string ({@link jsonStringBytes} of
   * `toString() + '\r'`, without the quotes), from what the values' checks measured: no second pass
   * over the text, except for the rare segment with a value that ends in a high surrogate.
   */
  jsonStringBytes(): number {
    const text = this.toString();
    // the name and the separators are ASCII (one byte each), the encoding characters hold one `\`, the CR is `\r`
    const bytes = text.length + (this.firstSettableField === 3 ? 1 : 0) + 2 + this.extraJsonBytesTotal;
    return Number.isNaN(bytes) ? jsonStringBytes(text + SEGMENT_TERMINATOR) - 2 : bytes;
  }
}

/**
 * An HL7 message: MSH followed by the other segments, in order. Serialized with every segment,
 * including the last one, terminated by CR (0x0D).
 */
export class Hl7Message {
  readonly header: Segment;
  private readonly body: Segment[] = [];

  constructor(header: Segment) {
    if (header.name !== 'MSH') {
      throw new Error('an HL7 message starts with MSH');
    }
    this.header = header;
  }

  /** Appends segments after the ones already there. */
  add(...segments: Segment[]): this {
    return this.addAll(segments);
  }

  /** {@link add} for a list (no argument spreading, whatever its length). */
  addAll(segments: readonly Segment[]): this {
    for (const segment of segments) {
      if (segment.name === 'MSH') {
        throw new Error('an HL7 message has one MSH');
      }
      this.body.push(segment);
    }
    return this;
  }

  get segments(): readonly Segment[] {
    return [this.header, ...this.body];
  }

  /** True when any segment holds text outside ASCII (HL7's default character set). */
  hasNonAsciiText(): boolean {
    if (this.header.hasNonAsciiText()) {
      return true;
    }
    for (const segment of this.body) {
      if (segment.hasNonAsciiText()) {
        return true;
      }
    }
    return false;
  }

  /** {@link jsonStringBytes} of {@link toString}: the bytes the message takes as a JSON string, quotes included. */
  jsonStringBytes(): number {
    let bytes = 2 + this.header.jsonStringBytes();
    for (const segment of this.body) {
      bytes += segment.jsonStringBytes();
    }
    return bytes;
  }

  toString(): string {
    let out = this.header.toString() + SEGMENT_TERMINATOR;
    for (const segment of this.body) {
      out += segment.toString() + SEGMENT_TERMINATOR;
    }
    return out;
  }
}
