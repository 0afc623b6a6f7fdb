import { type EscapedText, isEscapedText } from './escape';

/** One component: a single escaped value, or its subcomponents (joined by `&`). */
export type Component = EscapedText | readonly EscapedText[];

/** One field repetition: its components (joined by `^`). */
export type Components = readonly Component[];

/** What a field can hold: a single escaped value, or the components of one repetition. */
export type FieldValue = EscapedText | Components;

export const SEGMENT_TERMINATOR = '\r';
export const FIELD_SEPARATOR = '|';
export const COMPONENT_SEPARATOR = '^';
export const REPETITION_SEPARATOR = '~';
export const SUBCOMPONENT_SEPARATOR = '&';
/** MSH-2, exactly as hl7-notes.md requires. */
export const ENCODING_CHARACTERS = '^~\\&';

const SEGMENT_NAME = /^[A-Z][A-Z0-9]{2}$/;

function assertEscaped(value: string, where: string): void {
  if (!isEscapedText(value)) {
    // A programming error inside lib/hl7 (a value that skipped escaping), never a data problem.
    throw new Error(`${where}: value is not escaped HL7 text`);
  }
}

function trimTrailingEmpty<T>(values: readonly T[], isEmpty: (value: T) => boolean): readonly T[] {
  let end = values.length;
  while (end > 0 && isEmpty(values[end - 1] as T)) {
    end -= 1;
  }
  return values.slice(0, end);
}

function serializeComponent(component: Component): string {
  if (typeof component === 'string') {
    return component;
  }
  return trimTrailingEmpty(component, (sub) => sub === '').join(SUBCOMPONENT_SEPARATOR);
}

function serializeRepetition(components: Components): string {
  return trimTrailingEmpty(components.map(serializeComponent), (text) => text === '').join(COMPONENT_SEPARATOR);
}

/**
 * One HL7 segment. Fields are addressed 1-based as in the standard (`PID-3` is `set(3, ...)`).
 * For MSH, fields 1 (field separator) and 2 (encoding characters) are fixed and field 3 is the first
 * settable one, so `MSH-9` is `set(9, ...)` there too.
 *
 * Every value must be escaped ({@link EscapedText}); this is checked at run time as well, so a value can
 * never add a field, component, repetition or segment.
 */
export class Segment {
  readonly name: string;
  /** index = field number; each entry holds the field's repetitions */
  private readonly fields: Array<readonly Components[] | undefined> = [];

  constructor(name: string) {
    if (!SEGMENT_NAME.test(name)) {
      throw new Error(`invalid segment name ${JSON.stringify(name)}`);
    }
    this.name = name;
  }

  private get firstSettableField(): number {
    return this.name === 'MSH' ? 3 : 1;
  }

  /** Sets field `fieldNumber` to one value (one repetition). An empty value clears the field. */
  set(fieldNumber: number, value: FieldValue): this {
    return this.setRepetitions(fieldNumber, [typeof value === 'string' ? [value] : value]);
  }

  /** Sets a repeating field: one entry per repetition (joined by `~`). Empty repetitions are dropped. */
  setRepetitions(fieldNumber: number, repetitions: readonly Components[]): this {
    if (!Number.isInteger(fieldNumber) || fieldNumber < this.firstSettableField) {
      throw new Error(`${this.name}-${fieldNumber} cannot be set`);
    }
    for (const components of repetitions) {
      for (const component of components) {
        for (const value of typeof component === 'string' ? [component] : component) {
          assertEscaped(value, `${this.name}-${fieldNumber}`);
        }
      }
    }
    this.fields[fieldNumber] = repetitions.filter((components) => serializeRepetition(components) !== '');
    return this;
  }

  /** The serialized text of one field (all repetitions), `''` when empty. For MSH-1/MSH-2 the fixed values. */
  fieldText(fieldNumber: number): string {
    if (this.name === 'MSH' && fieldNumber === 1) {
      return FIELD_SEPARATOR;
    }
    if (this.name === 'MSH' && fieldNumber === 2) {
      return ENCODING_CHARACTERS;
    }
    const repetitions = this.fields[fieldNumber] ?? [];
    return repetitions.map(serializeRepetition).join(REPETITION_SEPARATOR);
  }

  /** The segment without its terminator. Trailing empty fields are not written. */
  toString(): string {
    const texts: string[] = [];
    for (let fieldNumber = this.firstSettableField; fieldNumber < this.fields.length; fieldNumber += 1) {
      texts.push(this.fieldText(fieldNumber));
    }
    const written = trimTrailingEmpty(texts, (text) => text === '');
    const head = this.name === 'MSH' ? [this.name, ENCODING_CHARACTERS] : [this.name];
    return [...head, ...written].join(FIELD_SEPARATOR);
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

  toString(): string {
    return this.segments.map((segment) => segment.toString() + SEGMENT_TERMINATOR).join('');
  }
}
