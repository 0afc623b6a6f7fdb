/**
 * How much code of its own a Lambda bundle may carry beside the AWS SDK (issue 31 item 5).
 *
 * "Own code" is everything in a function's minified bundle (scripts/build.ts LAMBDA_BUNDLE_OPTIONS)
 * that is not the AWS SDK: lib/ and functions/, and packages outside the SDK clients' dependency
 * closure (@middy/core, aws-jwt-verify, double-metaphone, standardwebhooks, ajv's runtime helpers).
 * "SDK code" is the rest: the @aws-sdk/client-* packages the function's `needs` let it use and every
 * package they depend on (package-lock.json).
 *
 * The rule: a function's own code is at most {@link OWN_CODE_SHARE_OF_SDK} of the SDK code in its
 * bundle (the 1.15x of issue 31 item 5, measured in the bundle itself; a function without an SDK
 * client: its whole bundle within 1.15x of the smallest SDK code of any function). A function whose job is
 * parsing and mapping partner messages cannot meet it without losing function; it has a budget of
 * its own below, in KB, with what it carries. test/bundle-budgets.test.ts holds every function to
 * its rule, fails on a budget more than {@link BUDGET_SLACK} above what the function carries (lower
 * it: budgets only go down unless a change says why), and on a budget for a function the default
 * rule already covers (remove it). bench/RESULTS.md section 1 reports the measured ratios beside.
 */

/** Own code at most this share of the SDK code in the same bundle. */
export const OWN_CODE_SHARE_OF_SDK = 0.15;

/** A budget more than this share above what its function carries is stale. */
export const BUDGET_SLACK = 0.05;

export interface OwnCodeBudget {
  /** own code (minified KB) the bundle may carry at most */
  readonly kb: number;
  /** what that code is, and why the function needs it */
  readonly carries: string;
}

/** The functions above the default share, each with its budget. */
export const OwnCodeBudgets: Readonly<Record<string, OwnCodeBudget>> = {
  exportHl7PatientSummary: {
    kb: 94,
    carries:
      'every HL7 encoder of the chart: patient, encounter, note, assessment and lab ORDER_OBSERVATION groups; lab result decryption; the merged timeline and its paging',
  },
  exportHl7Encounter: {
    kb: 55,
    carries:
      "the HL7 encoders of a patient and an encounter, the patient gate (the partner's relationship with the patient), purpose of use and the disclosure record",
  },
  exportHl7Assessment: {
    kb: 55,
    carries:
      "the HL7 encoders of a patient and an assessment, the patient gate (the partner's relationship with the patient), purpose of use and the disclosure record",
  },
  exportHl7LabResult: {
    kb: 80,
    carries:
      "the ORU^R01 encoder of a lab result with its reports (S3), lab result decryption, the patient gate (the partner's relationship with the patient), purpose of use and the disclosure record",
  },
  receiveTestData: {
    kb: 90,
    carries:
      'the lab result validator (the JSON Schema, compiled), lab record rules, the result store (versions, current pointer, idempotency, notification ledger), envelope encryption; the filing rule (relationship, demographics) and held records',
  },
  receiveHl7: {
    kb: 154,
    carries:
      'the HL7 v2 parser and batch reader; ADT, ORU and MDM mappings with the chart record rules; the lab result validator and store; partner identities and held records; the filing rule (relationship, re-checked staff links, document-number register)',
  },
  routeHeldRecord: {
    kb: 103,
    carries:
      "every held record's filing path: lab results (validator, store, encryption), notes and patients (chart record rules); the relationship routing makes",
  },
  fhirPatientEverything: {
    kb: 78,
    carries:
      'every FHIR mapping of the chart and of lab results (Patient, Encounter, DocumentReference, DiagnosticReport, Observation), envelope decryption, paging',
  },
  fhirObservationRead: {
    kb: 62,
    carries: 'the FHIR mapping of a lab result (DiagnosticReport and its Observations from one decrypted result), search parameters, envelope decryption',
  },
  fhirObservationSearch: {
    kb: 70,
    carries: 'the FHIR mapping of a lab result (DiagnosticReport and its Observations from one decrypted result), search parameters, envelope decryption',
  },
  fhirDiagnosticReportRead: {
    kb: 62,
    carries: 'the FHIR mapping of a lab result (DiagnosticReport and its Observations from one decrypted result), search parameters, envelope decryption',
  },
  fhirDiagnosticReportSearch: {
    kb: 70,
    carries: 'the FHIR mapping of a lab result (DiagnosticReport and its Observations from one decrypted result), search parameters, envelope decryption',
  },
  receiveFhirBundle: {
    kb: 156,
    carries:
      'FHIR structure rules, transaction and batch rules, the DiagnosticReport and QuestionnaireResponse mappings, the lab result and form packet validators, both intake paths',
  },
  receiveFhirDiagnosticReport: {
    kb: 139,
    carries:
      'FHIR structure rules, the DiagnosticReport mapping, the lab result validator, the result store and envelope encryption, the filing rule (relationships)',
  },
  unlinkHeldRecord: { kb: 53, carries: "the held review's wiring (held records, partner identities, relationships, the chart reader) for ending a staff link" },
  receiveFhirQuestionnaireResponse: { kb: 83, carries: 'FHIR structure rules, the QuestionnaireResponse mapping, the form packet validator and form intake' },
};

/** A bundle's bytes: its own code, and the SDK code beside it. */
export interface BundleWeight {
  readonly own: number;
  readonly sdk: number;
}

/**
 * Own and SDK bytes of a bundle from its bytes per package (a node_modules package name, or any
 * other key for lib/ and functions/): a package in `sdkPackages` is SDK code, everything else own.
 */
export function weighBundle(bytesByPackage: Readonly<Record<string, number>>, sdkPackages: ReadonlySet<string>): BundleWeight {
  let own = 0;
  let sdk = 0;
  for (const [pkg, bytes] of Object.entries(bytesByPackage)) {
    if (sdkPackages.has(pkg)) sdk += bytes;
    else own += bytes;
  }
  return { own, sdk };
}

/**
 * The own code (bytes) a function may carry: its budget when it has one; else its whole bundle within
 * 1 + {@link OWN_CODE_SHARE_OF_SDK} of its SDK code, or of `smallestSdk` (the smallest SDK code of any
 * function) when it has none.
 */
export function ownCodeAllowance(name: string, weight: BundleWeight, smallestSdk: number): number {
  const budget = OwnCodeBudgets[name];
  return budget ? budget.kb * 1024 : defaultOwnCodeAllowance(weight, smallestSdk);
}

/** The default rule's allowance, budgets aside. */
export function defaultOwnCodeAllowance(weight: BundleWeight, smallestSdk: number): number {
  return (1 + OWN_CODE_SHARE_OF_SDK) * (weight.sdk > 0 ? weight.sdk : smallestSdk) - weight.sdk;
}
