/**
 * The functions as infra deploys them: each HTTP route (lib/config/routes.ts) with what it touches,
 * its memory and timeout and the files shipped beside it; the authorizer; the background functions.
 * Read by infra/, lib/local/, the bench and the tests; no Lambda bundle needs it (a function's own
 * route is all its pipeline reads). Part of the service facts (lib/config/service.ts re-exports
 * it). Side-effect free at module level (every call marked pure), so esbuild drops it from a
 * bundle that only imports other service facts through service.ts.
 */
import { BundledFiles, type BundledFile } from './bundled-files';
import { KmsPurposes, type ResourceNeeds, type TableOperation } from './resource-needs';
import { HttpRoutes, type EndpointName, type HttpRoute } from './routes';
import type { QueueId } from './queues';

export interface HttpEndpoint extends HttpRoute {
  kind: 'http';
  needs: ResourceNeeds;
  memoryMb: number;
  timeoutSeconds: number;
  /** files the function reads at run time, shipped beside its bundle */
  bundledFiles?: BundledFile[];
}

/** What infra deploys for one HTTP route. */
export type EndpointDeployment = Pick<HttpEndpoint, 'needs' | 'memoryMb' | 'timeoutSeconds' | 'bundledFiles'>;

export interface BackgroundFunction {
  kind: 'queue' | 'schedule';
  name: string;
  queue?: QueueId;
  /** rate expression for scheduled functions */
  schedule?: string;
  needs: ResourceNeeds;
  memoryMb: number;
  timeoutSeconds: number;
}

/** The audit record every HTTP function appends (lib/http/middleware/audit-recording.ts). */
const AUDIT: TableOperation[] = ['PutItem'];
/**
 * An export or FHIR read (lib/disclosures/disclosing-routes.ts): its disclosures go to the audit table
 * (PutItem, above); the partner's distinct patients of the hour to the rate-limit table (a marker
 * PutItem if absent, the counter UpdateItem: lib/disclosures/patient-read-volume.ts).
 */
const READ_VOLUME: TableOperation[] = ['PutItem', 'UpdateItem'];
/** chart reads by id: patient (GetItem), or patient + record (+ encounter) in one BatchGetItem */
const exportNeeds: ResourceNeeds = { tables: { chart: ['GetItem', 'BatchGetItem'], audit: AUDIT, rateLimit: READ_VOLUME } };
/** one chart item by id (ChartStore.getPatient / getRecord) */
const chartGetNeeds: ResourceNeeds = { tables: { chart: ['GetItem'], audit: AUDIT, rateLimit: READ_VOLUME } };
/** FHIR searches of a patient's records of one kind (ChartStore.recordsOfKind: Query on the table) */
const chartSearchNeeds: ResourceNeeds = { tables: { chart: ['Query'], audit: AUDIT, rateLimit: READ_VOLUME } };
const LAB_KMS = ['Decrypt'] as ResourceNeeds['kms'];
const LAB_KMS_PURPOSES = [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac];
/** FHIR reads that include lab results (decrypted summaries: results table + KMS Decrypt) */
const fhirLabNeeds: ResourceNeeds = {
  // one lab result by id: its versions (Query on the table), the lookup keys item (GetItem)
  tables: { chart: ['GetItem'], results: ['GetItem', 'Query'], audit: AUDIT, rateLimit: READ_VOLUME },
  kms: LAB_KMS,
  kmsPurposes: LAB_KMS_PURPOSES,
};
/** a patient's lab results page (ResultStore.resultsForPatientPage: Query on byPatient) */
const fhirLabSearchNeeds: ResourceNeeds = {
  tables: { chart: ['GetItem'], results: ['GetItem', 'Query:byPatient'], audit: AUDIT, rateLimit: READ_VOLUME },
  kms: LAB_KMS,
  kmsPurposes: LAB_KMS_PURPOSES,
};
/**
 * the lab result writer (receiveTestData, receiveHl7, FHIR DiagnosticReport and Bundle intake:
 * LabResultWriter): versions, ledger, lookup keys; no Query (it reads no version list, no pending shard)
 */
/** DeleteItem: a lab result's notification marker goes once the notification is sent (lib/results/notification-ledger.ts) */
const RESULT_WRITES: TableOperation[] = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'];
/** routeHeldRecord: the writer and the reads of whole versions (LabResultVersionReader: its version Query) */
const RESULT_WRITES_AND_VERSION_READS: TableOperation[] = ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'];

/**
 * Who may hear of a webhook event (lib/webhooks/audience-wiring.ts): the partner item (GetItem) and
 * its keys (Scan: the keys table has no index by partner), the relationship (chart GetItem), the
 * result version (results Query, its lookup keys item GetItem).
 */
const WEBHOOK_AUDIENCE_TABLES: ResourceNeeds['tables'] = { keys: ['GetItem', 'Scan'], chart: ['GetItem'], results: ['GetItem', 'Query'] };

/** The idempotency table of a partner's x-request-id / Bundle.identifier: claim, answer, release. */
const IDEMPOTENCY_WRITES: TableOperation[] = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'];

/**
 * FHIR DiagnosticReport intake: the lab result writer of receiveHl7 (patient resolution: chart patients,
 * MRN index, partner identities, held records; keys: the owner of an assigning authority) and the
 * idempotency table (x-request-id answers). No form intake (lib/fhir-intake/lab-report-wiring.ts).
 */
const fhirLabReportIntakeNeeds: ResourceNeeds = {
  tables: { chart: ['GetItem', 'PutItem'], results: RESULT_WRITES, idempotency: IDEMPOTENCY_WRITES, keys: ['GetItem'], audit: AUDIT },
  queues: { notifications: 'send' },
  kms: ['GenerateDataKey', 'Decrypt'],
  kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
  // parts too large for an item are written (PutObject), never read back here
  documentsBucket: 'write',
};

/**
 * FHIR QuestionnaireResponse intake: the form intake of receiveFormIntakeScope (packets, match key,
 * matching queue), the idempotency table and the results table's lookup key (its keyed hashes name an
 * x-request-id's answer). No lab result writer, no documents bucket (lib/fhir-intake/questionnaire-response-wiring.ts).
 */
const fhirQuestionnaireResponseIntakeNeeds: ResourceNeeds = {
  tables: { chart: ['GetItem'], results: ['GetItem', 'PutItem'], idempotency: IDEMPOTENCY_WRITES, forms: ['GetItem', 'PutItem'], audit: AUDIT },
  queues: { matching: 'send' },
  kms: ['GenerateDataKey', 'Decrypt'],
  kmsPurposes: [KmsPurposes.resultsLookupHmac, KmsPurposes.formPacket, KmsPurposes.matchIndexKey],
};

/** FHIR Bundle intake (receiveFhirBundle): a Bundle may hold both, so both intakes. */
const fhirBundleIntakeNeeds: ResourceNeeds = {
  tables: {
    chart: ['GetItem', 'PutItem'],
    results: RESULT_WRITES,
    idempotency: IDEMPOTENCY_WRITES,
    forms: ['GetItem', 'PutItem'],
    keys: ['GetItem'],
    audit: AUDIT,
  },
  queues: { notifications: 'send', matching: 'send' },
  kms: ['GenerateDataKey', 'Decrypt'],
  kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac, KmsPurposes.formPacket, KmsPurposes.matchIndexKey],
  documentsBucket: 'write',
};

/** Per route of lib/config/routes.ts (the compiler checks that every route has its entry, and no other). */
export const EndpointDeployments: Record<EndpointName, EndpointDeployment> = {
  exportHl7PatientAdt: { needs: chartGetNeeds, memoryMb: 512, timeoutSeconds: 10 },
  exportHl7PatientSummary: {
    needs: {
      // the summary: timeline (Query on byTimeline; the patient by GetItem on a continuation page), lab results of the patient (Query on byPatient), lookup keys
      tables: { chart: ['GetItem', 'Query:byTimeline'], results: ['GetItem', 'Query:byPatient'], audit: AUDIT, rateLimit: READ_VOLUME },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
    },
    memoryMb: 1024,
    timeoutSeconds: 15,
  },
  exportHl7Encounter: { needs: exportNeeds, memoryMb: 512, timeoutSeconds: 10 },
  exportHl7Note: { needs: exportNeeds, memoryMb: 512, timeoutSeconds: 10 },
  exportHl7Assessment: { needs: exportNeeds, memoryMb: 512, timeoutSeconds: 10 },
  receiveTestData: {
    needs: {
      // no keys table: the partner comes from the authorizer's context
      // chart: relationships, patients and the MRN index read (filing), held records put
      tables: { chart: ['GetItem', 'PutItem'], results: RESULT_WRITES, idempotency: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'], audit: AUDIT },
      queues: { notifications: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
      documentsBucket: 'write',
    },
    memoryMb: 1024,
    timeoutSeconds: 29,
  },
  exportHl7LabResult: {
    needs: {
      tables: { chart: ['GetItem'], results: ['GetItem', 'Query'], audit: AUDIT, rateLimit: READ_VOLUME },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
      documentsBucket: 'read',
    },
    memoryMb: 1024,
    timeoutSeconds: 15,
  },
  receiveFormIntakeScope: {
    needs: {
      // packet and, the first time one is needed, the match key envelope: both conditional puts (PacketIntakeWriter)
      tables: { chart: ['GetItem'], forms: ['GetItem', 'PutItem'], audit: AUDIT },
      queues: { matching: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      kmsPurposes: [KmsPurposes.formPacket, KmsPurposes.matchIndexKey],
    },
    memoryMb: 512,
    timeoutSeconds: 15,
  },
  receiveHl7: {
    needs: {
      // chart: patients, notes (+ versions), held records, partner identities, MRN index, merge reviews;
      // keys: the chart assigning authority's owner
      tables: {
        chart: ['GetItem', 'PutItem', 'UpdateItem'],
        results: RESULT_WRITES,
        idempotency: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
        keys: ['GetItem'],
        audit: AUDIT,
      },
      queues: { notifications: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac, KmsPurposes.matchIndexKey, KmsPurposes.formPacket],
      documentsBucket: 'write',
    },
    memoryMb: 1024,
    timeoutSeconds: 29,
  },
  listInteropInbox: { needs: { tables: { forms: ['Query:byStateSummary', 'Query:byState'], audit: AUDIT } }, memoryMb: 512, timeoutSeconds: 10 },
  listHeldRecords: { needs: { tables: { chart: ['Query'], audit: AUDIT } }, memoryMb: 512, timeoutSeconds: 10 },
  getHeldRecord: { needs: { tables: { chart: ['GetItem'], audit: AUDIT } }, memoryMb: 512, timeoutSeconds: 10 },
  // the held record, the partner identity (conditional update of its link), the relationship when ended
  unlinkHeldRecord: { needs: { tables: { chart: ['GetItem', 'PutItem', 'UpdateItem'], audit: AUDIT } }, memoryMb: 256, timeoutSeconds: 10 },
  // one Query of the patient's partition (its relationship items)
  listPatientRelationships: { needs: { tables: { chart: ['Query'], audit: AUDIT } }, memoryMb: 256, timeoutSeconds: 10 },
  // read the relationship, then one conditional put of it ended
  endPatientRelationship: { needs: { tables: { chart: ['GetItem', 'PutItem'], audit: AUDIT } }, memoryMb: 256, timeoutSeconds: 10 },
  // a document -> a chart note (only if absent), an identity -> its staff link, lab results -> a new
  // version for the chart patient (the result writer of receiveTestData, without its idempotency table)
  routeHeldRecord: {
    needs: {
      tables: { chart: ['GetItem', 'PutItem', 'UpdateItem'], results: RESULT_WRITES_AND_VERSION_READS, audit: AUDIT },
      queues: { notifications: 'send' },
      kms: ['GenerateDataKey', 'Decrypt'],
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
      documentsBucket: 'readwrite',
    },
    memoryMb: 1024,
    timeoutSeconds: 29,
  },
  searchHeldPatients: {
    needs: { tables: { chart: ['GetItem'], forms: ['GetItem', 'Query'], audit: AUDIT }, kms: ['Decrypt'], kmsPurposes: [KmsPurposes.matchIndexKey] },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  getInboxPacket: {
    needs: { tables: { chart: ['GetItem'], forms: ['GetItem'], audit: AUDIT }, kms: ['Decrypt'], kmsPurposes: [KmsPurposes.formPacket] },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  // chart PutItem: the packet's partner is related to the patient staff route it to
  routeInboxPacket: {
    needs: { tables: { chart: ['GetItem', 'PutItem'], forms: ['GetItem', 'PutItem', 'UpdateItem'], audit: AUDIT } },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  searchInboxPatients: {
    needs: { tables: { chart: ['GetItem'], forms: ['GetItem', 'Query'], audit: AUDIT }, kms: ['Decrypt'], kmsPurposes: [KmsPurposes.matchIndexKey] },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  getInboxCandidates: { needs: { tables: { chart: ['GetItem'], forms: ['GetItem'], audit: AUDIT } }, memoryMb: 512, timeoutSeconds: 10 },
  serveInboxPage: { needs: {}, memoryMb: 256, timeoutSeconds: 5 },
  serveOpenApiDocument: { needs: {}, memoryMb: 256, timeoutSeconds: 5, bundledFiles: [BundledFiles.openApiDocument] },
  serveApiReference: { needs: {}, memoryMb: 512, timeoutSeconds: 5, bundledFiles: [BundledFiles.openApiDocument, BundledFiles.redocBundle] },
  fhirMetadata: { needs: {}, memoryMb: 256, timeoutSeconds: 10 },
  fhirPatientRead: { needs: chartGetNeeds, memoryMb: 512, timeoutSeconds: 10 },
  // by MRN: the chart's MRN index (GetItem), keyed by the results table's lookup key (GetItem, unwrapped with KMS, never created)
  fhirPatientSearch: {
    needs: {
      tables: { chart: ['GetItem'], results: ['GetItem'], audit: AUDIT, rateLimit: READ_VOLUME },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.resultsLookupHmac],
    },
    memoryMb: 512,
    timeoutSeconds: 10,
  },
  fhirPatientEverything: {
    needs: {
      tables: { chart: ['GetItem', 'Query:byTimeline'], results: ['GetItem', 'Query:byPatient'], audit: AUDIT, rateLimit: READ_VOLUME },
      kms: LAB_KMS,
      kmsPurposes: LAB_KMS_PURPOSES,
    },
    memoryMb: 1024,
    timeoutSeconds: 15,
  },
  fhirEncounterRead: { needs: chartGetNeeds, memoryMb: 512, timeoutSeconds: 10 },
  fhirEncounterSearch: { needs: chartSearchNeeds, memoryMb: 512, timeoutSeconds: 10 },
  fhirDocumentReferenceRead: { needs: chartGetNeeds, memoryMb: 512, timeoutSeconds: 10 },
  fhirDocumentReferenceSearch: { needs: chartSearchNeeds, memoryMb: 512, timeoutSeconds: 10 },
  fhirObservationRead: { needs: fhirLabNeeds, memoryMb: 512, timeoutSeconds: 10 },
  fhirObservationSearch: {
    needs: {
      tables: { chart: ['GetItem', 'Query'], results: ['GetItem', 'Query:byPatient'], audit: AUDIT, rateLimit: READ_VOLUME },
      kms: LAB_KMS,
      kmsPurposes: LAB_KMS_PURPOSES,
    },
    memoryMb: 512,
    timeoutSeconds: 15,
  },
  fhirDiagnosticReportRead: { needs: fhirLabNeeds, memoryMb: 512, timeoutSeconds: 10 },
  fhirDiagnosticReportSearch: { needs: fhirLabSearchNeeds, memoryMb: 512, timeoutSeconds: 15 },
  // Lab results through the HL7 ORU result writer (patient resolution, held records), forms through the
  // form intake (packets, match key, matching queue); the idempotency table keeps each Bundle's answer.
  // Each route is granted only the intake it can run (a Bundle may hold both).
  receiveFhirBundle: { needs: fhirBundleIntakeNeeds, memoryMb: 1024, timeoutSeconds: 29 },
  receiveFhirDiagnosticReport: { needs: fhirLabReportIntakeNeeds, memoryMb: 1024, timeoutSeconds: 29 },
  receiveFhirQuestionnaireResponse: { needs: fhirQuestionnaireResponseIntakeNeeds, memoryMb: 1024, timeoutSeconds: 29 },
  // one Query of the patient's disclosure partition per page (and the request's own audit record)
  listDisclosures: { needs: { tables: { audit: ['PutItem', 'Query'] } }, memoryMb: 256, timeoutSeconds: 10 },
  fhirRouteNotFound: { needs: {}, memoryMb: 256, timeoutSeconds: 10 },
};

/** The endpoint list: every route with its deployment facts, in the route list's order. */
export const HttpEndpoints: HttpEndpoint[] = /* @__PURE__ */ HttpRoutes.map((route): HttpEndpoint =>
  Object.assign({ kind: 'http' as const }, route, EndpointDeployments[route.name as EndpointName]),
);

/** The authorizer runs in front of every HTTP endpoint. */
export const AuthorizerFunction = {
  name: 'authorizer',
  needs: { tables: { keys: ['GetItem'], rateLimit: ['GetItem', 'BatchGetItem', 'UpdateItem'] } } as ResourceNeeds,
  memoryMb: 256,
  timeoutSeconds: 5,
};

export const BackgroundFunctions: BackgroundFunction[] = [
  {
    kind: 'queue',
    name: 'matchFormPackets',
    queue: 'matching',
    needs: {
      tables: { chart: ['GetItem'], forms: ['GetItem', 'Query', 'PutItem', 'UpdateItem'], audit: AUDIT },
      queues: { matching: 'consume' },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.formPacket, KmsPurposes.matchIndexKey],
    },
    memoryMb: 512,
    timeoutSeconds: 30,
  },
  {
    kind: 'schedule',
    name: 'sweepPendingPackets',
    schedule: 'rate(5 minutes)',
    needs: { tables: { forms: ['Query:byStateSummary', 'Query:byState', 'UpdateItem'] }, queues: { matching: 'send' } },
    memoryMb: 256,
    timeoutSeconds: 60,
  },
  {
    kind: 'queue',
    name: 'fanOutWebhookEvents',
    queue: 'notifications',
    // keys, chart, results, KMS, S3: who may hear of a result (lib/webhooks/audience-wiring.ts): the
    // partner and its keys' scopes, its relationship with the result's chart patient (read from the version)
    needs: {
      tables: { webhooks: ['GetItem', 'PutItem', 'UpdateItem', 'Query:byList'], ...WEBHOOK_AUDIENCE_TABLES },
      queues: { notifications: 'consume', webhookDeliveries: 'send' },
      kms: ['Decrypt'],
      // the version's chart patient: decrypting the version (lab result) finds its item by the lookup keys
      kmsPurposes: [KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
      documentsBucket: 'read',
    },
    memoryMb: 256,
    timeoutSeconds: 30,
  },
  {
    kind: 'queue',
    name: 'deliverWebhooks',
    queue: 'webhookDeliveries',
    // ChangeMessageVisibility (the backoff) is part of consume
    // the audience rule again before every attempt (as fanOutWebhookEvents)
    needs: {
      tables: { webhooks: ['GetItem', 'PutItem', 'UpdateItem'], ...WEBHOOK_AUDIENCE_TABLES },
      queues: { webhookDeliveries: 'consume' },
      kms: ['Decrypt'],
      kmsPurposes: [KmsPurposes.webhookSecret, KmsPurposes.labResult, KmsPurposes.resultsLookupHmac],
      documentsBucket: 'read',
    },
    memoryMb: 512,
    timeoutSeconds: 30,
  },
  {
    kind: 'schedule',
    name: 'revokeExpiredKeys',
    // a rotated key is refused by the authorizer from its expiresAt on; this revokes it in the table
    // and deletes its API Gateway key (10,000 per account and region) within 15 minutes
    schedule: 'rate(15 minutes)',
    needs: { tables: { keys: ['Scan', 'UpdateItem'], audit: AUDIT }, apiGatewayKeys: 'delete' },
    memoryMb: 256,
    timeoutSeconds: 60,
  },
  {
    kind: 'schedule',
    name: 'retryResultNotifications',
    schedule: 'rate(5 minutes)',
    // Query: the notification markers' shards; Query:byPatient: owed versions of the older layout; DeleteItem: a sent marker
    needs: { tables: { results: ['GetItem', 'UpdateItem', 'DeleteItem', 'Query', 'Query:byPatient'] }, queues: { notifications: 'send' } },
    memoryMb: 256,
    timeoutSeconds: 60,
  },
];
