/**
 * Which routes disclose a patient's records to the caller: the HL7 exports (`export*`) and the FHIR
 * reads and searches (`fhir*`), GET only. Their successful patient-scoped answers are disclosures
 * (HIPAA 45 CFR 164.528): each takes an `x-purpose-of-use` and each is recorded in the accounting
 * (lib/disclosures/disclosure-log.ts). Intake, the inbox and the accounting itself are not
 * disclosures to a partner; FHIR metadata and unknown FHIR paths read no stored data (no audit step).
 */
import type { HttpRoute } from '../config/routes';

/** Whether a successful answer of this route to a patient-scoped request is a disclosure of that patient's records. */
export function disclosesPatientRecords(route: Pick<HttpRoute, 'name' | 'method'>): boolean {
  return route.method === 'GET' && (route.name.startsWith('export') || route.name.startsWith('fhir'));
}
