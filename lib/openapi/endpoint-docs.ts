/**
 * What the OpenAPI document says about each endpoint of `HttpEndpoints` (lib/config/service.ts),
 * keyed by endpoint name: the title partners see, the parameters and their rules, the request body
 * (a schema of schemas/, never a copy), every status the endpoint can answer with an example.
 * Method, path and scope come from the endpoint list; the problem+json schema, headers and the
 * security scheme from lib/openapi/document.ts. A new endpoint without an entry here makes
 * `npm run openapi` (and the staleness test) fail with a message naming it.
 */
import { SUMMARY_LIMIT } from '../exports/chart-exports';
import { DEFAULT_INBOX_LIMIT, LISTABLE_STATES, MAX_INBOX_LIMIT } from '../forms/inbox';
import { MAX_PACKET_CONTENT_BYTES } from '../forms/intake';
import { ID_PATTERN } from '../http/query';
import { BODY_TOO_LARGE_DETAIL, MAX_REQUEST_BODY_BYTES } from '../http/body-limit';

/** The request body limit as the docs state it. */
const BODY_LIMIT_TEXT = `${MAX_REQUEST_BODY_BYTES} bytes (4 MiB; the app's limit, below Lambda's 6 MB payload limit)`;
import { DEFAULT_HELD_LIMIT, HELD_STATES, MAX_HELD_LIMIT } from '../intake/held-review';
import type { FieldError } from '../domain-errors';
import { ResponseSchemas } from './response-schemas';
import { DEFAULT_DISCLOSURE_LIMIT, MAX_DISCLOSURE_LIMIT } from '../disclosures/disclosure-reader';

export type Tag = 'HL7 exports' | 'HL7 intake' | 'Lab results' | 'Form intake' | 'Interop inbox' | 'FHIR R4' | 'Disclosures' | 'API reference';

export interface ParameterDoc {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  description: string;
  schema: Record<string, unknown>;
  example: string | number;
}

/** A successful answer: an HL7 v2 message (example in lib/openapi/examples/<name>.hl7) or JSON. */
export type SuccessDoc =
  | { kind: 'hl7'; description: string; exampleFile: string }
  | { kind: 'html'; description: string; example: string }
  | { kind: 'fhir'; description: string; schema: 'FhirResource' | 'FhirBundle'; exampleFile: string }
  | {
      kind: 'json';
      description: string;
      schema: keyof typeof ResponseSchemas;
      examples: Record<string, { summary: string; value: unknown }>;
    };

/** A refusal: its description and one example of the problem body (type, detail, errors). */
export interface ProblemDoc {
  description: string;
  examples: Record<string, { summary: string; kind: string; detail: string; errors?: FieldError[]; extensions?: Record<string, unknown> }>;
}

export interface EndpointDoc {
  /** the operation's title in the reference page */
  summary: string;
  description: string;
  tag: Tag;
  parameters: ParameterDoc[];
  requestBody?: { schemaFile: string; description: string; examples: Record<string, { summary: string; value: unknown }> };
  /** an HL7 v2 request body (`application/hl7-v2`), its example in lib/openapi/examples/ */
  hl7RequestBody?: { description: string; exampleFile: string };
  /** a FHIR R4 JSON request body (`application/fhir+json`, also `application/json`), its example in lib/openapi/examples/ */
  fhirRequestBody?: { description: string; resourceType: string; exampleFile: string };
  /** the endpoint can echo a stored answer (idempotent replay): `idempotent-replayed: true` */
  replayHeader?: boolean;
  success: Record<number, SuccessDoc>;
  /** refusals beyond the ones every endpoint can give (400 401 403 429 500 503) */
  problems: Record<number, ProblemDoc>;
  /** a realistic 400 for this endpoint */
  badRequest: ProblemDoc;
}

const idSchema = { type: 'string', pattern: ID_PATTERN.source, minLength: 1, maxLength: 128 };
const idRule =
  'Required, sent once (a repeat of the same value counts as once; two different values are a 400), 1-128 characters of letters, digits, `.`, `_`, `:` or `-`.';

/** An optional query parameter. */
function optionalQuery(name: string, description: string, schema: Record<string, unknown>, example: string | number): ParameterDoc {
  return { name, in: 'query', required: false, description, schema, example };
}

function idParameter(name: string, what: string, example: string): ParameterDoc {
  return { name, in: 'query', required: true, description: `${what}. ${idRule}`, schema: idSchema, example };
}

const patientId = idParameter('patientId', "The chart patient's id", 'demo-patient-1');

function exportProblems(record: string): Record<number, ProblemDoc> {
  return {
    404: {
      description: `No patient or ${record} with these ids, or the ${record} belongs to another patient (same answer either way: existence is never revealed).`,
      examples: { notFound: { summary: `unknown ${record}`, kind: 'notFound', detail: `no ${record} with these ids was found` } },
    },
    406: {
      description: 'The Accept header excludes application/hl7-v2.',
      examples: {
        notAcceptable: {
          summary: 'Accept: application/json',
          kind: 'notAcceptable',
          detail: 'this endpoint produces application/hl7-v2 only',
        },
      },
    },
  };
}

function exportBadRequest(names: string[]): ProblemDoc {
  return {
    description: 'A parameter is missing, empty, repeated with different values or malformed; every failing parameter is listed.',
    examples: {
      missing: {
        summary: 'parameters missing',
        kind: 'validation',
        detail: 'query parameters are missing or invalid',
        errors: names.map((parameter) => ({ parameter, message: 'is required' })),
      },
    },
  };
}

const jsonBodyProblems = (limitText: string): Record<number, ProblemDoc> => ({
  413: {
    description: `The body exceeds ${limitText}.`,
    examples: {
      tooLarge: { summary: 'body too large', kind: 'payloadTooLarge', detail: BODY_TOO_LARGE_DETAIL },
    },
  },
  415: {
    description: 'The body was not sent as `Content-Type: application/json`.',
    examples: {
      unsupported: {
        summary: 'text/plain body',
        kind: 'unsupportedMediaType',
        detail: 'the request body must be sent as Content-Type: application/json',
      },
    },
  },
});

const labExample = {
  data: {
    senderID: 'demo-lab',
    patientID: 'demo-patient-1',
    accessionNumber: 'ACC-2024-000123',
    recordNo: 'REC-77',
    status: 'final',
    ResultedDateUTC: '2024-03-01T09:30:00Z',
    results: [
      { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' },
      { testName: 'Hemoglobin A1c', result: '6.1', units: '%', referenceRange: '4.0-5.6' },
    ],
  },
};

const labModelExample = {
  data: {
    senderID: 'demo-lab',
    patientID: 'demo-patient-1',
    accessionNumber: 'ACC-2024-000124',
    status: 'final',
    ResultedDateUTC: '2024-03-01T17:00:00Z',
    order: {
      placerOrderNumber: { id: 'PL-1001', namespace: 'DEMO-EHR' },
      accessionNamespace: 'DEMO-LAB',
      universalService: { code: '24323-8', display: 'Comprehensive metabolic panel', system: 'LN' },
      collectedAt: '2024-03-01T08:30-06:00',
      orderStatus: 'F',
      comments: ['Specimen slightly hemolyzed'],
    },
    results: [
      {
        testName: 'Potassium',
        result: '6.9',
        units: 'millimole per liter',
        unitsCode: 'mmol/L',
        referenceRange: '3.5-5.1',
        code: '2823-3',
        codeSystem: 'LN',
        valueType: 'NM',
        numericValue: '6.9',
        abnormalFlags: ['HH'],
        observationStatus: 'F',
        observedAt: '2024-03-01T10:45-06:00',
        comments: ['Critical value called to Dr Smith at 10:50'],
      },
    ],
  },
};

const formExample = {
  payload: {
    sourceSystemId: 'demo-forms',
    formId: 'intake-v1',
    formName: 'New patient intake',
    submissionId: 'sub-2024-0042',
    patient: { externalPatientId: 'ext-991', firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12', email: 'alex.sample@example.com' },
    answers: { reasonForVisit: 'Annual check-up', smoker: false, painScore: 2, allergies: ['penicillin'] },
  },
};

const packetId = 'fp_d6323e00f7e6ed351c3fd179c51abe07';
const requestId = '8f14e45f-ceea-4a67-9f3c-5f5c6b0f2a11';

const fhirPatient: ParameterDoc = {
  name: 'patient',
  in: 'query',
  required: true,
  description: 'The patient: `<id>` or `Patient/<id>`. Sent once.',
  schema: { type: 'string', minLength: 1 },
  example: 'demo-patient-1',
};
const fhirCount = optionalQuery('_count', 'Page size, 1-200 (default 20). Sent at most once.', { type: 'integer', minimum: 1, maximum: 200, default: 20 }, 20);
const fhirCategory = (what: string, example: string): ParameterDoc =>
  optionalQuery(
    'category',
    `${what} A token: \`code\`, \`system|code\`, \`|code\` or \`system|\`; a comma-separated list is OR. Sent at most once.`,
    { type: 'string', minLength: 1 },
    example,
  );
const fhirCode = optionalQuery(
  'code',
  'Observation.code as a token: `code`, `system|code` (e.g. `http://loinc.org|2345-7`), `|code` or `system|`; a comma-separated list is OR. Sent at most once.',
  { type: 'string', minLength: 1 },
  'http://loinc.org|2345-7',
);
const fhirDate = optionalQuery(
  'date',
  'effective[x] (else issued): `[prefix]YYYY[-MM[-DD[Thh:mm[:ss][Z|±hh:mm]]]]`, prefix eq (default), ne, gt, lt, ge, le, sa or eb; a value is the range its precision covers (no offset: UTC). Repeat for AND (up to 4), e.g. `date=ge2024-01-01&date=lt2025-01-01`.',
  { type: 'string', pattern: '^(eq|ne|gt|lt|ge|le|sa|eb)?\\d{4}(-\\d{2}(-\\d{2}(T.+)?)?)?$' },
  'ge2024-01-01',
);
const fhirPageToken = optionalQuery('_page_token', 'The token of a `next` link (opaque).', { type: 'string', minLength: 1 }, 'eyJ2IjoxfQ');

/** The 400 of an endpoint that reads nothing from the request but the x-request-id header. */
const requestIdBadRequest: ProblemDoc = {
  description: 'The x-request-id header is malformed.',
  examples: {
    requestId: {
      summary: 'bad x-request-id',
      kind: 'validation',
      detail: 'the x-request-id header is invalid',
      errors: [{ header: 'x-request-id', message: 'must be 1-128 visible ASCII characters' }],
    },
  },
};

/** The 404 of the read-only packet operations (InboxPacketNotFoundError). */
const inboxPacketNotFound: ProblemDoc = {
  description: 'No packet with this id, or a packet routed directly at intake (never in the inbox).',
  examples: { notFound: { summary: 'unknown packet', kind: 'notFound', detail: 'no inbox packet with this id' } },
};

/** The 400 of an operation that reads only its path and the x-request-id header. */
const packetPathBadRequest: ProblemDoc = {
  description: 'The path is not valid percent-encoding, or the x-request-id header is malformed.',
  examples: { path: { summary: 'undecodable path', kind: 'badRequest', detail: 'the request path is not valid percent-encoding' } },
};

const heldId = 'held-20240305101500-3f2a9c0d1e4b5a6978877665';
const heldIdParameter: ParameterDoc = {
  name: 'heldId',
  in: 'path',
  required: true,
  description: 'The held record id (`held-` + receipt time + 24 hex).',
  schema: { type: 'string' },
  example: heldId,
};
const heldNotFound: ProblemDoc = {
  description: 'No held record with this id.',
  examples: { notFound: { summary: 'unknown held record', kind: 'notFound', detail: 'no held record with this id' } },
};
const heldDocumentExample = {
  heldId,
  kind: 'document',
  state: 'held',
  reason: 'patient-unresolved',
  receivedAt: '2024-03-05T10:15:00.000Z',
  partnerId: 'demo-lab',
  sender: 'DEMO-LAB-LIS',
  person: { name: { family: 'Example', given: 'Sam' }, birthDate: '1975-01-02', sex: 'F', identifiers: [{ value: 'L-55012', authority: 'DEMO-LAB' }] },
  description: { author: { id: '1001', name: { family: 'Doc', given: 'Ada' } }, createdAt: '2024-03-05T09:00:00.000Z', documentNumber: 'DOC-17' },
};

export const EndpointDocs: Record<string, EndpointDoc> = {
  exportHl7PatientAdt: {
    summary: 'Export patient demographics (ADT^A08)',
    description: "The patient's current demographics as one HL7 v2.5.1 `ADT^A08^ADT_A01` message (MSH EVN PID [PD1] [NK1] PV1). Segments end with CR.",
    tag: 'HL7 exports',
    parameters: [patientId],
    success: { 200: { kind: 'hl7', description: 'The ADT^A08 message.', exampleFile: 'exportHl7PatientAdt.hl7' } },
    problems: exportProblems('patient'),
    badRequest: exportBadRequest(['patientId']),
  },
  exportHl7PatientSummary: {
    summary: 'Export a patient summary (FHS/BHS batch, or one ORU^R01)',
    description:
      'The patient\'s `limit` most recent records across encounters, notes, assessments and lab results, newest first. By default an FHS/BHS batch: ADT^A08 demographics, then per record an ADT^A08 (encounter) with an ORU^R01 per order, an MDM^T02 (note), an ORU^R01 (assessment, lab result), each with its own MSH-10. A partner whose HL7 profile says `summaryStyle: oru` gets one `ORU^R01^ORU_R01` with one order group per record. Never over 5,000,000 bytes: `x-summary-truncated` and `x-summary-records` tell whether records were cut (README). Paging: while older records remain (beyond `limit`, or cut by the byte budget) the header `x-summary-next-cursor` carries the `cursor` of the next page; following it page after page gives every record of the chart exactly once, newest first (README "Paging").',
    tag: 'HL7 exports',
    parameters: [
      patientId,
      optionalQuery(
        'limit',
        `How many records, ${SUMMARY_LIMIT.min}-${SUMMARY_LIMIT.max} (default ${SUMMARY_LIMIT.fallback}). Sent at most once.`,
        { type: 'integer', minimum: SUMMARY_LIMIT.min, maximum: SUMMARY_LIMIT.max, default: SUMMARY_LIMIT.fallback },
        3,
      ),
      optionalQuery(
        'cursor',
        'The `x-summary-next-cursor` of the previous page (opaque; only for the same patient). Sent at most once.',
        { type: 'string', minLength: 1, maxLength: 2048 },
        'eyJrIjoiaCIsImMiOiIyMDI0LTA5LTEwVDE0OjAwOjAwLjAwMFojZW5jb3VudGVyI2RlbW8tZW5jb3VudGVyLTQifQ',
      ),
    ],
    success: { 200: { kind: 'hl7', description: 'The ORU^R01 summary message.', exampleFile: 'exportHl7PatientSummary.hl7' } },
    problems: exportProblems('patient'),
    badRequest: {
      description: 'patientId missing or malformed, limit outside its range, or a cursor this server did not issue.',
      examples: {
        limit: {
          summary: 'limit out of range',
          kind: 'validation',
          detail: 'limit must be an integer from 1 to 200',
          errors: [{ parameter: 'limit', message: 'must be an integer from 1 to 200' }],
        },
      },
    },
  },
  exportHl7Encounter: {
    summary: 'Export an encounter (ADT^A08, or ORU^R01)',
    description:
      'One encounter as HL7 v2.5.1 `ADT^A08^ADT_A01` (EVN, PID, PV1, PV2, one DG1 per diagnosis); a partner whose HL7 profile says `encounterStyle: oru` gets `ORU^R01^ORU_R01` with the visit, coded diagnosis OBX and the orders (ORC/OBR).',
    tag: 'HL7 exports',
    parameters: [patientId, idParameter('encounterId', "The encounter's id", 'demo-encounter-1')],
    success: { 200: { kind: 'hl7', description: 'The ORU^R01 encounter message.', exampleFile: 'exportHl7Encounter.hl7' } },
    problems: exportProblems('encounter'),
    badRequest: exportBadRequest(['patientId', 'encounterId']),
  },
  exportHl7Note: {
    summary: 'Export a clinical note (MDM^T02)',
    description: 'One chart note as HL7 v2.5.1 `MDM^T02^MDM_T02` (MSH EVN PID PV1 TXA OBX); the text is OBX-5 TX, one repetition per line.',
    tag: 'HL7 exports',
    parameters: [patientId, idParameter('noteId', "The note's id", 'demo-note-1')],
    success: { 200: { kind: 'hl7', description: 'The MDM^T02 message.', exampleFile: 'exportHl7Note.hl7' } },
    problems: exportProblems('note'),
    badRequest: exportBadRequest(['patientId', 'noteId']),
  },
  exportHl7Assessment: {
    summary: 'Export an assessment (ORU^R01)',
    description: 'One assessment (e.g. PHQ-9) with its items, total and interpretation as HL7 v2.5.1 `ORU^R01^ORU_R01`.',
    tag: 'HL7 exports',
    parameters: [patientId, idParameter('assessmentId', "The assessment's id", 'demo-assessment-1')],
    success: { 200: { kind: 'hl7', description: 'The ORU^R01 assessment message.', exampleFile: 'exportHl7Assessment.hl7' } },
    problems: exportProblems('assessment'),
    badRequest: exportBadRequest(['patientId', 'assessmentId']),
  },
  receiveTestData: {
    summary: 'Submit a lab result',
    description:
      'A lab result is validated, stored envelope-encrypted as a new version of the result (accession + sender), and a notification is attempted. Send a unique `x-request-id` per submission: a retry with the same id and body replays the first answer (`idempotent-replayed: true`), with another body it is a 409. See docs/lab-results.md.',
    tag: 'Lab results',
    parameters: [],
    replayHeader: true,
    requestBody: {
      schemaFile: 'lab-result.schema.json',
      description: `One lab result (\`data\`), at most ${BODY_LIMIT_TEXT}.`,
      examples: {
        twoTests: { summary: 'a final result with two tests', value: labExample },
        labModel: { summary: 'with the optional lab model fields: order, codes, flags, UCUM units, a comment', value: labModelExample },
      },
    },
    success: {
      200: {
        kind: 'json',
        description: 'Stored (or recognised as already stored: `duplicate: true`).',
        schema: 'LabResultReceipt',
        examples: {
          stored: {
            summary: 'stored (the answer is the same whether or not patientID is a chart patient)',
            value: {
              status: 'success',
              message: 'Encrypted result saved; notifications attempted.',
              requestId: 'lis-0001',
              resultId: 'lr_64acab0027538c30bcba35faa2c0000d',
              version: 'lv_4f1ceca1e8673c6985f221ba9cc35200',
              current: true,
              duplicate: false,
              notification: 'sent',
            },
          },
        },
      },
    },
    problems: {
      403: {
        description: 'The key lacks interop:ingest:results, the partner is blocked, or the partner may not send for this `senderID`.',
        examples: {
          sender: { summary: 'sender not allowed', kind: 'forbidden', detail: 'this partner may not submit results for this senderID' },
        },
      },
      409: {
        description: 'The `x-request-id` was used before with a different body, or the first request with it is still in progress (then with `Retry-After`).',
        examples: {
          conflict: {
            summary: 'x-request-id reused with another body',
            kind: 'conflict',
            detail: 'this x-request-id was already used with a different body',
          },
          inProgress: {
            summary: 'still in progress',
            kind: 'inProgress',
            detail: 'a request with this x-request-id is still in progress; retry later',
          },
        },
      },
      ...jsonBodyProblems(BODY_LIMIT_TEXT),
    },
    badRequest: {
      description: 'Invalid JSON or failing fields; every failing field is listed by JSON pointer.',
      examples: {
        fields: {
          summary: 'missing and invalid fields',
          kind: 'validation',
          detail: 'the lab result failed validation',
          errors: [
            { pointer: '/data/accessionNumber', message: 'is required' },
            { pointer: '/data/status', message: 'must be one of: preliminary, final, corrected, amended, cancelled, P, F, C, X' },
          ],
        },
      },
    },
  },
  receiveFormIntakeScope: {
    summary: 'Submit a form packet',
    description: `A form submission for a patient. Routed straight to the patient when \`payload.patientId\` names a known chart patient; otherwise held in the interop inbox for matching (\`pending_match\`) or staff review (\`pending_review\`). Every accepted case answers the same 202. The same \`sourceSystemId\` + \`submissionId\` with the same content again changes nothing. Packet content (patient, answers, form name) at most ${MAX_PACKET_CONTENT_BYTES} bytes; each answer string at most 100,000 characters. See docs/forms.md.`,
    tag: 'Form intake',
    parameters: [],
    requestBody: {
      schemaFile: 'form-packet.schema.json',
      description: 'One form packet (`payload`).',
      examples: {
        unmatched: { summary: 'no patientId: held for matching', value: formExample },
        named: {
          summary: 'a known patientId: routed',
          value: { payload: { ...formExample.payload, submissionId: 'sub-2024-0043', patientId: 'demo-patient-1' } },
        },
      },
    },
    success: {
      202: {
        kind: 'json',
        description:
          'Accepted: routed to the named patient, held in the inbox, queued for matching, or the same submission again (nothing stored). The answer is the same in every case: it never tells whether a patient exists or where the packet went.',
        schema: 'FormPacketReceipt',
        examples: { accepted: { summary: 'accepted', value: { status: 'accepted', packetId, requestId } } },
      },
    },
    problems: {
      403: {
        description: 'The key lacks interop:ingest:forms, the partner is blocked, or the partner does not own this `sourceSystemId`.',
        examples: {
          source: { summary: 'a form source of another partner', kind: 'forbidden', detail: "this API key's partner does not own this sourceSystemId" },
        },
      },
      409: {
        description: 'This `sourceSystemId` + `submissionId` was received before with different content (send a changed form under a new submissionId).',
        examples: {
          changed: {
            summary: 'changed resubmission',
            kind: 'conflict',
            detail: 'this submissionId was already received with different content; send a changed form with a new submissionId',
          },
        },
      },
      ...jsonBodyProblems(`${BODY_LIMIT_TEXT}, or the packet content exceeds ${MAX_PACKET_CONTENT_BYTES} bytes`),
    },
    badRequest: {
      description: 'Invalid JSON or failing fields; every failing field is listed by JSON pointer (submitted values are never echoed).',
      examples: {
        fields: {
          summary: 'missing fields',
          kind: 'validation',
          detail: 'the form packet failed validation',
          errors: [
            { pointer: '/payload/submissionId', message: 'is required' },
            { pointer: '/payload/patient/dob', message: 'must be a date YYYY-MM-DD' },
          ],
        },
      },
    },
  },
  listInteropInbox: {
    summary: 'List inbox packets',
    description: 'Packets waiting in the interop inbox, newest first, as summaries (ids, states, reason codes, times, candidate counts; no PHI).',
    tag: 'Interop inbox',
    parameters: [
      optionalQuery(
        'state',
        `Which packets: ${LISTABLE_STATES.join(' or ')} (default pending_review). Sent at most once.`,
        { type: 'string', enum: [...LISTABLE_STATES], default: 'pending_review' },
        'pending_review',
      ),
      optionalQuery(
        'limit',
        `Page size, 1-${MAX_INBOX_LIMIT} (default ${DEFAULT_INBOX_LIMIT}).`,
        { type: 'integer', minimum: 1, maximum: MAX_INBOX_LIMIT, default: DEFAULT_INBOX_LIMIT },
        25,
      ),
      optionalQuery(
        'cursor',
        '`nextCursor` of the previous page (opaque).',
        { type: 'string', minLength: 1 },
        'eyJ2IjoxLCJzIjoicGVuZGluZ19yZXZpZXciLCJrIjp7fX0',
      ),
    ],
    success: {
      200: {
        kind: 'json',
        description: 'One page of packet summaries; `nextCursor` when there are more.',
        schema: 'InboxPage',
        examples: {
          page: {
            summary: 'one packet waiting for review',
            value: {
              state: 'pending_review',
              limit: 25,
              items: [
                {
                  packetId,
                  state: 'pending_review',
                  reason: 'unknown_patient_id',
                  sourceSystemId: 'demo-forms',
                  formId: 'intake-v1',
                  receivedAt: '2024-03-05T10:15:00.000Z',
                  stateChangedAt: '2024-03-05T10:15:00.000Z',
                  requestedPatientId: 'demo-patient-404',
                  candidateCount: 0,
                },
              ],
              requestId,
            },
          },
        },
      },
    },
    problems: {},
    badRequest: {
      description: 'state, limit or cursor invalid.',
      examples: {
        state: {
          summary: 'unknown state',
          kind: 'validation',
          detail: 'state must be one of: pending_match, pending_review',
          errors: [{ parameter: 'state', message: 'must be one of: pending_match, pending_review' }],
        },
      },
    },
  },
  getInboxPacket: {
    summary: 'Read an inbox packet',
    description:
      'One packet that is or was in the interop inbox, decrypted: form, patient as the form tool described them, answers, match candidates with scores, and the state history.',
    tag: 'Interop inbox',
    parameters: [
      {
        name: 'packetId',
        in: 'path',
        required: true,
        description: 'The packet id (`fp_` + 32 hex).',
        schema: { type: 'string' },
        example: packetId,
      },
    ],
    success: {
      200: {
        kind: 'json',
        description: 'The packet.',
        schema: 'InboxPacket',
        examples: {
          packet: {
            summary: 'a packet naming an unknown patient',
            value: {
              packetId,
              state: 'pending_review',
              reason: 'unknown_patient_id',
              requestedPatientId: 'demo-patient-404',
              sourceSystemId: 'demo-forms',
              formId: 'intake-v1',
              submissionId: 'sub-2',
              partnerId: 'demo-forms',
              receivedAt: '2024-03-05T10:15:00.000Z',
              stateChangedAt: '2024-03-05T10:15:00.000Z',
              formName: 'New patient intake',
              patient: { firstName: 'Sam', lastName: 'Example', dob: '1975-01-02' },
              answers: { q1: 'no' },
              candidates: [],
              history: [
                {
                  at: '2024-03-05T10:15:00.000Z',
                  action: 'received',
                  state: 'pending_review',
                  actor: 'api-key',
                  keyId: 'key_bf2c7841141e',
                  partnerId: 'demo-forms',
                  reason: 'unknown_patient_id',
                },
                {
                  at: '2024-03-05T10:15:00.350Z',
                  action: 'assessed',
                  from: 'pending_review',
                  state: 'pending_review',
                  actor: 'matcher',
                  reason: 'unknown_patient_id',
                },
              ],
              requestId,
            },
          },
        },
      },
    },
    problems: { 404: inboxPacketNotFound },
    badRequest: packetPathBadRequest,
  },
  getInboxCandidates: {
    summary: "Compare a packet's candidates with their charts",
    description:
      'The chart demographics (name, birth date, sex, MRN and assigning authority, address) of every candidate the matcher recorded for the packet and of the patient the sender named, for a reviewer to compare with the packet. Every patient shown is named in the audit trail.',
    tag: 'Interop inbox',
    parameters: [
      { name: 'packetId', in: 'path', required: true, description: 'The packet id (`fp_` + 32 hex).', schema: { type: 'string' }, example: packetId },
    ],
    success: {
      200: {
        kind: 'json',
        description: 'The charts of the candidates (and of the named patient).',
        schema: 'InboxCandidates',
        examples: {
          charts: {
            summary: 'two candidates with the same name and birth date',
            value: {
              packetId,
              charts: [
                {
                  patientId: 'demo-patient-3',
                  role: 'candidate',
                  score: 70,
                  name: { family: 'Rivera', given: 'Casey' },
                  birthDate: '1990-06-15',
                  sex: 'U',
                  mrn: 'DEMO-000003',
                  assigningAuthority: 'DEMO-HOSP',
                  address: { city: 'Springfield', state: 'IL' },
                },
                {
                  patientId: 'demo-patient-4',
                  role: 'candidate',
                  score: 70,
                  name: { family: 'Rivera', given: 'Casey' },
                  birthDate: '1990-06-15',
                  sex: 'U',
                  mrn: 'DEMO-000004',
                  assigningAuthority: 'DEMO-HOSP',
                  address: { city: 'Shelbyville', state: 'IL' },
                },
              ],
              requestId,
            },
          },
        },
      },
    },
    problems: { 404: inboxPacketNotFound },
    badRequest: packetPathBadRequest,
  },
  serveInboxPage: {
    summary: 'The staff inbox page (HTML)',
    description:
      "The inbox page for staff: one HTML document with a strict Content-Security-Policy. It holds no data: it signs staff in (authorization code + PKCE) and calls the inbox operations with the ID token. No key needed; counted against the anonymous limit of the caller's address. See docs/inbox-page.md.",
    tag: 'Interop inbox',
    parameters: [],
    success: {
      200: {
        kind: 'html',
        description: 'The page.',
        example: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Interop inbox</title>...</head><body>...</body></html>',
      },
    },
    problems: {
      503: {
        description: 'Staff sign-in is not configured for this stage, or a dependency is unavailable.',
        examples: { notConfigured: { summary: 'sign-in not configured', kind: 'unavailable', detail: 'staff sign-in is not configured' } },
      },
    },
    badRequest: requestIdBadRequest,
  },
  routeInboxPacket: {
    summary: 'Route an inbox packet to a patient',
    description:
      'Routes a packet waiting in the inbox (pending_review or pending_match) to a chart patient: state `routed_manually`, recorded in the history with the reviewer.',
    tag: 'Interop inbox',
    parameters: [
      {
        name: 'packetId',
        in: 'path',
        required: true,
        description: 'The packet id (`fp_` + 32 hex).',
        schema: { type: 'string' },
        example: packetId,
      },
    ],
    requestBody: {
      schemaFile: 'inbox-route.schema.json',
      description: 'The chart patient to route to.',
      examples: { route: { summary: 'route to demo-patient-1', value: { patientId: 'demo-patient-1' } } },
    },
    success: {
      200: {
        kind: 'json',
        description: 'Routed.',
        schema: 'RouteReceipt',
        examples: {
          routed: {
            summary: 'routed manually',
            value: { status: 'routed', packetId, routedTo: 'demo-patient-1', state: 'routed_manually', requestId },
          },
        },
      },
    },
    problems: {
      404: {
        description: 'No inbox packet with this id, or no chart patient with this patientId.',
        examples: {
          packet: { summary: 'unknown packet', kind: 'notFound', detail: 'no inbox packet with this id' },
          patient: { summary: 'unknown patient', kind: 'notFound', detail: 'no patient with this patientId' },
        },
      },
      409: {
        description: 'The packet has already been routed (its state and patient are in the body).',
        examples: {
          routed: {
            summary: 'already routed',
            kind: 'conflict',
            detail: 'the packet has already been routed to a patient',
            extensions: { state: 'routed_manually', routedTo: 'demo-patient-1' },
          },
        },
      },
      ...jsonBodyProblems(BODY_LIMIT_TEXT),
    },
    badRequest: {
      description: 'Invalid JSON or failing fields.',
      examples: {
        fields: {
          summary: 'patientId missing',
          kind: 'validation',
          detail: 'the route request failed validation',
          errors: [{ pointer: '/patientId', message: 'is required' }],
        },
      },
    },
  },
  unlinkHeldRecord: {
    summary: "End a staff link of a partner's identity",
    description:
      "Ends the link a reviewer made by routing a held partner identity to a chart patient: the partner's later messages for that person resolve as if never linked (the chart's MRN index, else held again), and the held record is back in the queue for a new decision. `endRelationship=true` also ends the partner's relationship with the patient (kept otherwise: other records may rest on it). Audited under the patient.",
    tag: 'Interop inbox',
    parameters: [
      heldIdParameter,
      optionalQuery(
        'endRelationship',
        "Also end the partner's relationship with the patient (default false).",
        { type: 'string', enum: ['true', 'false'] },
        'false',
      ),
    ],
    success: {
      200: {
        kind: 'json',
        description: 'Unlinked.',
        schema: 'HeldUnlinkReceipt',
        examples: {
          unlinked: {
            summary: 'an identity unlinked',
            value: { status: 'unlinked', heldId, unlinkedFrom: 'demo-patient-2', relationshipEnded: false, requestId },
          },
        },
      },
    },
    problems: {
      404: {
        description: 'No held record with this id.',
        examples: { held: { summary: 'unknown held record', kind: 'notFound', detail: 'no held record with this id' } },
      },
      409: {
        description: 'Not a routed partner identity, a link made by matching the chart (not by staff), or the record changed meanwhile.',
        examples: {
          kind: {
            summary: 'a document',
            kind: 'conflict',
            detail: 'only a routed partner identity can be unlinked (a filed document or result stays in the chart)',
          },
        },
      },
    },
    badRequest: {
      description: 'endRelationship other than true or false.',
      examples: {
        flag: {
          summary: 'a bad flag',
          kind: 'validation',
          detail: 'endRelationship must be true or false',
          errors: [{ parameter: 'endRelationship', message: 'must be true or false' }],
        },
      },
    },
  },
  listPatientRelationships: {
    summary: "A patient's partner relationships",
    description:
      'Every partner relationship of the patient (docs/write-authority.md Relationships), ended ones too, by partner id: purpose of use, how it was made (operator, import, staff, held-route, order, demo), since/until, who made it, endedAt/endedBy, and whether it holds now. A partner reaches the patient only through one that holds. An id that is no patient gets the same empty list.',
    tag: 'Interop inbox',
    parameters: [idParameter('patientId', "The chart patient's id", 'demo-patient-1')],
    success: {
      200: {
        kind: 'json',
        description: "The patient's relationships.",
        schema: 'RelationshipList',
        examples: {
          list: {
            summary: 'the demo lab, holding',
            value: {
              patientId: 'demo-patient-1',
              items: [
                {
                  partnerId: 'demo-lab',
                  patientId: 'demo-patient-1',
                  purpose: 'TREAT',
                  source: 'demo',
                  since: '2026-12-08T00:00:00.000Z',
                  createdBy: 'demo',
                  holding: true,
                },
              ],
              requestId,
            },
          },
        },
      },
    },
    problems: {},
    badRequest: {
      description: 'patientId missing or malformed.',
      examples: {
        missing: {
          summary: 'no patientId',
          kind: 'validation',
          detail: 'query parameters are missing or invalid',
          errors: [{ parameter: 'patientId', message: 'is required' }],
        },
      },
    },
  },
  endPatientRelationship: {
    summary: "End a partner's relationship with a patient",
    description:
      "Ends the partner's holding relationship with the patient from the next request on: its reads of the patient answer the policy 403, its records for the patient are held for review. The record is kept (endedAt, endedBy the staff member). Audited under the patient. The same 404 whether or not the patient exists.",
    tag: 'Interop inbox',
    parameters: [idParameter('patientId', "The chart patient's id", 'demo-patient-1'), idParameter('partnerId', "The partner's id", 'demo-lab')],
    success: {
      200: {
        kind: 'json',
        description: 'Ended.',
        schema: 'RelationshipEnded',
        examples: {
          ended: {
            summary: 'the demo lab ended',
            value: {
              status: 'ended',
              relationship: {
                partnerId: 'demo-lab',
                patientId: 'demo-patient-1',
                purpose: 'TREAT',
                source: 'demo',
                since: '2026-12-08T00:00:00.000Z',
                createdBy: 'demo',
                endedAt: '2026-12-08T10:00:00.000Z',
                endedBy: 'reviewer@example.org',
              },
              requestId,
            },
          },
        },
      },
    },
    problems: {
      404: {
        description: 'The partner has no holding relationship with the patient (never made, ended or expired).',
        examples: { none: { summary: 'none holding', kind: 'notFound', detail: 'no holding relationship of this partner with this patient' } },
      },
    },
    badRequest: {
      description: 'patientId or partnerId missing or malformed.',
      examples: {
        missing: {
          summary: 'no partnerId',
          kind: 'validation',
          detail: 'query parameters are missing or invalid',
          errors: [{ parameter: 'partnerId', message: 'is required' }],
        },
      },
    },
  },
  listDisclosures: {
    summary: "A patient's accounting of disclosures",
    description:
      "Every export and FHIR read that sent the patient's records to a partner (HIPAA 45 CFR 164.528; docs/disclosures.md), oldest first: when, the recipient (partner, key, staff member), what was sent (endpoint, action, resource ids: never a value of the record), the purpose of use (`x-purpose-of-use`, else the relationship's, else TREAT) and the request id. For the clinic's privacy reviewers (staff only). An id that is no patient gets the same empty page as a patient never disclosed.",
    tag: 'Disclosures',
    parameters: [
      idParameter('patientId', "The patient's internal id", 'demo-patient-1'),
      optionalQuery(
        'from',
        'A date (YYYY-MM-DD, from its start) or a UTC instant; inclusive. Default: six years before `to`.',
        { type: 'string' },
        '2026-12-01',
      ),
      optionalQuery('to', 'A date (YYYY-MM-DD, to its end) or a UTC instant; inclusive. Default: now.', { type: 'string' }, '2026-12-31'),
      optionalQuery(
        'limit',
        `Page size, 1-${MAX_DISCLOSURE_LIMIT} (default ${DEFAULT_DISCLOSURE_LIMIT}).`,
        { type: 'integer', minimum: 1, maximum: MAX_DISCLOSURE_LIMIT, default: DEFAULT_DISCLOSURE_LIMIT },
        50,
      ),
      optionalQuery('cursor', '`nextCursor` of the previous page.', { type: 'string', minLength: 1 }, 'MjAyNi0xMi0wN1QyMjowMDowMC4wMDBaI3JlcS0xI2FiY2Q'),
    ],
    success: {
      200: {
        kind: 'json',
        description: 'One page of disclosures; `nextCursor` when there are more.',
        schema: 'DisclosurePage',
        examples: {
          page: {
            summary: 'one HL7 note export',
            value: {
              patientId: 'demo-patient-1',
              from: '2026-12-01T00:00:00.000Z',
              to: '2026-12-31T23:59:59.999Z',
              limit: 50,
              items: [
                {
                  at: '2026-12-07T22:00:00.000Z',
                  requestId: 'ehr-0001',
                  partnerId: 'demo-ehr',
                  keyId: 'key_0123456789ab',
                  patientId: 'demo-patient-1',
                  endpoint: 'exportHl7Note',
                  action: 'export.note',
                  resourceIds: { noteId: 'demo-note-1' },
                  purposeOfUse: 'TREAT',
                  purposeSource: 'requested',
                },
              ],
              requestId: 'privacy-0001',
            },
          },
        },
      },
    },
    problems: {},
    badRequest: {
      description: 'patientId missing or invalid; from, to, limit or cursor invalid; from after to.',
      examples: {
        from: {
          summary: 'from after to',
          kind: 'validation',
          detail: 'from must not be after to',
          errors: [{ parameter: 'from', message: 'must not be after to' }],
        },
      },
    },
  },
  listHeldRecords: {
    summary: 'List records held from partners',
    description:
      "Lab results, documents and partner identities HL7 intake could not file to a chart patient (docs/write-authority.md), oldest first (the longest waiting first). Each item names the sender, the person as the sender described them (name, birth date, sex, PID-3 identifiers) and a short description: a document's author and time (never its text), the number of held results; nothing more for an identity.",
    tag: 'Interop inbox',
    parameters: [
      optionalQuery(
        'state',
        `Which records: ${HELD_STATES.join(' or ')} (default held). Sent at most once.`,
        { type: 'string', enum: [...HELD_STATES], default: 'held' },
        'held',
      ),
      optionalQuery(
        'limit',
        `Page size, 1-${MAX_HELD_LIMIT} (default ${DEFAULT_HELD_LIMIT}).`,
        { type: 'integer', minimum: 1, maximum: MAX_HELD_LIMIT, default: DEFAULT_HELD_LIMIT },
        25,
      ),
      optionalQuery('cursor', '`nextCursor` of the previous page.', { type: 'string', minLength: 1 }, heldId),
    ],
    success: {
      200: {
        kind: 'json',
        description: 'One page of held records; `nextCursor` when there are more.',
        schema: 'HeldPage',
        examples: { page: { summary: 'one held document', value: { state: 'held', limit: 25, items: [heldDocumentExample], requestId } } },
      },
    },
    problems: {},
    badRequest: {
      description: 'state, limit or cursor invalid.',
      examples: {
        state: {
          summary: 'unknown state',
          kind: 'validation',
          detail: 'state must be one of: held, routed',
          errors: [{ parameter: 'state', message: 'must be one of: held, routed' }],
        },
      },
    },
  },
  getHeldRecord: {
    summary: 'Read a record held from a partner',
    description:
      "One held record in full: what the list shows, the message id (MSH-10), and by kind the note with its text (document), the held result ids (lab-result) or the partner's latest view of the person (identity); once routed, where to, when and by whom.",
    tag: 'Interop inbox',
    parameters: [heldIdParameter],
    success: {
      200: {
        kind: 'json',
        description: 'The held record.',
        schema: 'HeldRecord',
        examples: {
          document: {
            summary: 'a held document',
            value: {
              ...heldDocumentExample,
              sourceMessageId: 'MSG-00017',
              note: {
                noteId: 'demo-lab:DOC-17',
                documentNumber: 'DOC-17',
                author: { id: '1001', name: { family: 'Doc', given: 'Ada' } },
                createdAt: '2024-03-05T09:00:00.000Z',
                text: 'Seen for follow-up.',
                provenance: { partnerId: 'demo-lab', sender: 'DEMO-LAB-LIS', sourceMessageId: 'MSG-00017', receivedAt: '2024-03-05T10:15:00.000Z' },
                version: 1,
              },
              requestId,
            },
          },
        },
      },
    },
    problems: { 404: heldNotFound },
    badRequest: packetPathBadRequest,
  },
  searchHeldPatients: {
    summary: 'Search the chart from a held record (MRN, or name + birth date)',
    description:
      'The chart search of the packet view, for a reviewer routing a record held from a partner: chart patients with this MRN (any assigning authority, any case), or this last name and birth date (a first name narrows). Exact hits only, at most 20 (`more` when more fit). A POST so that no MRN, name or birth date is in a URL. Every patient shown is named in the audit trail.',
    tag: 'Interop inbox',
    parameters: [heldIdParameter],
    requestBody: {
      schemaFile: 'inbox-patient-search.schema.json',
      description: 'An MRN, or a last name and a birth date (and optionally a first name).',
      examples: {
        mrn: { summary: 'by MRN', value: { mrn: 'DEMO-000001' } },
        name: { summary: 'by last name and birth date', value: { lastName: 'Example', birthDate: '1975-06-30', firstName: 'Robin' } },
      },
    },
    success: {
      200: {
        kind: 'json',
        description: 'The chart patients that fit (possibly none).',
        schema: 'HeldPatientSearchResult',
        examples: {
          found: {
            summary: 'one patient with this MRN',
            value: {
              heldId,
              charts: [
                {
                  patientId: 'demo-patient-1',
                  role: 'search',
                  name: { family: 'Sample', given: 'Alex' },
                  birthDate: '1980-04-12',
                  sex: 'F',
                  mrn: 'DEMO-000001',
                  assigningAuthority: 'DEMO-HOSP',
                },
              ],
              more: false,
              requestId,
            },
          },
        },
      },
    },
    problems: { 404: heldNotFound, ...jsonBodyProblems(BODY_LIMIT_TEXT) },
    badRequest: {
      description: 'Invalid JSON, or neither an MRN nor a last name with a birth date; every failing field is listed (values are never echoed).',
      examples: {
        fields: {
          summary: 'birth date missing',
          kind: 'validation',
          detail: 'the patient search failed validation',
          errors: [{ pointer: '/birthDate', message: 'is required' }],
        },
      },
    },
  },
  routeHeldRecord: {
    summary: 'Route a record held from a partner to a patient',
    description:
      "Files a held record under a chart patient, then marks it routed: a document becomes a note of the patient (only if the patient has no note with its id), a partner identity is linked to the patient (the partner's later ORU and MDM for that person are filed to the patient), held lab results get a new current version for the patient (same sender and partner). Audited under the chart patient. After a failure part way, the same request completes the route.",
    tag: 'Interop inbox',
    parameters: [heldIdParameter],
    requestBody: {
      schemaFile: 'inbox-route.schema.json',
      description: 'The chart patient to route to.',
      examples: { route: { summary: 'route to demo-patient-1', value: { patientId: 'demo-patient-1' } } },
    },
    success: {
      200: {
        kind: 'json',
        description: 'Routed.',
        schema: 'HeldRouteReceipt',
        examples: {
          routed: {
            summary: 'a document routed',
            value: { status: 'routed', heldId, kind: 'document', routedTo: 'demo-patient-1', noteId: 'demo-lab:DOC-17', requestId },
          },
        },
      },
    },
    problems: {
      404: {
        description: 'No held record with this id, or no chart patient with this patientId.',
        examples: {
          held: { summary: 'unknown held record', kind: 'notFound', detail: 'no held record with this id' },
          patient: { summary: 'unknown patient', kind: 'notFound', detail: 'no patient with this patientId' },
        },
      },
      409: {
        description:
          'The record has already been routed (the patient is in the body), or the patient already has another note with the document id (nothing was changed).',
        examples: {
          routed: {
            summary: 'already routed',
            kind: 'conflict',
            detail: 'the held record has already been routed to a patient',
            extensions: { state: 'routed', routedTo: 'demo-patient-1' },
          },
          note: {
            summary: 'another note with this id',
            kind: 'conflict',
            detail: 'the patient already has another note with this document id: nothing was changed',
            extensions: { noteId: 'demo-lab:DOC-17' },
          },
        },
      },
      ...jsonBodyProblems(BODY_LIMIT_TEXT),
    },
    badRequest: {
      description: 'Invalid JSON or failing fields.',
      examples: {
        fields: {
          summary: 'patientId missing',
          kind: 'validation',
          detail: 'the route request failed validation',
          errors: [{ pointer: '/patientId', message: 'is required' }],
        },
      },
    },
  },
  exportHl7LabResult: {
    summary: 'Export one lab result (ORU^R01)',
    description:
      "The current version of one lab result (the `resultId` a webhook event or the intake answer named) as HL7 v2.5.1 `ORU^R01^ORU_R01`: PID from the chart when the lab named a chart patient (else PID-3 the lab patient id, type PI), one OBR, NTE comment rows, one OBX per test, reports as OBX ED (base64) or TX. Never over 5,000,000 bytes (like the summary; below Lambda's 6 MB response limit): reports beyond the budget are left out, an NTE after the OBR says how many of how many the message holds, and the headers `x-export-truncated` and `x-export-reports` (`<included>/<available>`) tell the caller. See docs/webhooks.md.",
    tag: 'HL7 exports',
    parameters: [idParameter('resultId', 'The lab result id (`lr_` + 32 hex)', 'lr_7fb625a9891c676b9cb1ae6f1fa649ea')],
    success: {
      200: {
        kind: 'hl7',
        description: 'The ORU^R01 of the current version (reports beyond the 5,000,000-byte budget left out: `x-export-truncated`, `x-export-reports`).',
        exampleFile: 'exportHl7LabResult.hl7',
      },
    },
    problems: exportProblems('lab result'),
    badRequest: exportBadRequest(['resultId']),
  },
  receiveHl7: {
    summary: 'Send HL7 v2 messages (ORU, ADT, MDM), answered with an ACK',
    description:
      'One HL7 v2 message or an FHS/BHS batch, ER7 encoded (`Content-Type: application/hl7-v2`; CR, LF or CRLF segment ends; MLLP framing stripped). ORU^R01 results are stored as lab results, ADT A01/A04/A08/A28/A31 update the chart patient found by PID-3, A40 merges are held for review, MDM^T02 notes are stored. Every message is answered with an HL7 ACK (HTTP 200): MSA `AA` accepted, `AE` refused by a rule (ERR names the field), `AR` not processable (version, type, sender, syntax); a batch gets a batch ACK. A resend under the same MSH-4 + MSH-10 gets the first ACK; the ACK never quotes a submitted value. See docs/hl7-intake.md.',
    tag: 'HL7 intake',
    parameters: [],
    hl7RequestBody: {
      description: `One HL7 v2 message or an FHS/BHS batch (at most 100 messages), at most ${BODY_LIMIT_TEXT}.`,
      exampleFile: 'receiveHl7.hl7',
    },
    success: { 200: { kind: 'hl7', description: 'The ACK (AA, AE or AR with ERR), or a batch ACK.', exampleFile: 'receiveHl7.ack.hl7' } },
    problems: {
      413: {
        description: `The body exceeds ${BODY_LIMIT_TEXT}.`,
        examples: { tooLarge: { summary: 'body too large', kind: 'payloadTooLarge', detail: BODY_TOO_LARGE_DETAIL } },
      },
      415: {
        description: 'The body was not sent as `application/hl7-v2` (or `x-application/hl7-v2+er7`, `text/plain`).',
        examples: {
          unsupported: { summary: 'JSON body', kind: 'unsupportedMediaType', detail: 'the request body must be sent as Content-Type: application/hl7-v2' },
        },
      },
    },
    badRequest: {
      description: 'The body holds no MSH (or FHS/BHS) segment: there is nothing to acknowledge.',
      examples: {
        noMsh: { summary: 'no MSH', kind: 'badRequest', detail: 'the body is not an HL7 v2 message: it does not start with an MSH, FHS or BHS segment' },
      },
    },
  },
  searchInboxPatients: {
    summary: 'Search the chart from an inbox packet (MRN, or name + birth date)',
    description:
      "For a reviewer routing a packet whose patient is not among the matcher's candidates: chart patients with this MRN (any assigning authority, any case), or this last name and birth date (a first name narrows). Exact hits only, at most 20 (`more` when more fit). A POST so that no MRN, name or birth date is in a URL. Every patient shown is named in the audit trail. See docs/inbox-page.md.",
    tag: 'Interop inbox',
    parameters: [
      { name: 'packetId', in: 'path', required: true, description: 'The packet id (`fp_` + 32 hex).', schema: { type: 'string' }, example: packetId },
    ],
    requestBody: {
      schemaFile: 'inbox-patient-search.schema.json',
      description: 'An MRN, or a last name and a birth date (and optionally a first name).',
      examples: {
        mrn: { summary: 'by MRN', value: { mrn: 'DEMO-000001' } },
        name: { summary: 'by last name and birth date', value: { lastName: 'Example', birthDate: '1975-06-30', firstName: 'Robin' } },
      },
    },
    success: {
      200: {
        kind: 'json',
        description: 'The chart patients that fit (possibly none).',
        schema: 'PatientSearchResult',
        examples: {
          found: {
            summary: 'one patient with this MRN',
            value: {
              packetId,
              charts: [
                {
                  patientId: 'demo-patient-1',
                  role: 'search',
                  name: { family: 'Sample', given: 'Alex' },
                  birthDate: '1980-04-12',
                  sex: 'F',
                  mrn: 'DEMO-000001',
                  assigningAuthority: 'DEMO-HOSP',
                },
              ],
              more: false,
              requestId,
            },
          },
        },
      },
    },
    problems: {
      404: {
        description: 'No packet with this id, or one no longer in the inbox.',
        examples: { notFound: { summary: 'unknown packet', kind: 'notFound', detail: 'no inbox packet with this id' } },
      },
      ...jsonBodyProblems(BODY_LIMIT_TEXT),
    },
    badRequest: {
      description: 'Invalid JSON, or neither an MRN nor a last name with a birth date; every failing field is listed (values are never echoed).',
      examples: {
        fields: {
          summary: 'birth date missing',
          kind: 'validation',
          detail: 'the patient search failed validation',
          errors: [{ pointer: '/birthDate', message: 'is required' }],
        },
      },
    },
  },
  serveOpenApiDocument: {
    summary: 'This OpenAPI document',
    description:
      "The OpenAPI 3.1 document of this API as JSON, byte for byte the docs/openapi.json of the deployed version. Counted against the anonymous limit of the caller's address.",
    tag: 'API reference',
    parameters: [],
    success: {
      200: {
        kind: 'json',
        description: 'The document.',
        schema: 'OpenApiDocument',
        examples: {
          document: {
            summary: 'the document (shortened)',
            value: { openapi: '3.1.0', info: { title: 'Clinical interoperability partner API', version: '1.0.0' }, paths: {} },
          },
        },
      },
    },
    problems: {},
    badRequest: requestIdBadRequest,
  },
  serveApiReference: {
    summary: 'The API reference page (HTML)',
    description:
      "This document rendered by Redoc as one self-contained HTML page (script and document inline, nothing fetched from elsewhere, strict Content-Security-Policy). Counted against the anonymous limit of the caller's address.",
    tag: 'API reference',
    parameters: [],
    success: {
      200: {
        kind: 'html',
        description: 'The page.',
        example:
          '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Clinical interoperability partner API - API reference</title>...</head><body>...</body></html>',
      },
    },
    problems: {},
    badRequest: requestIdBadRequest,
  },
  fhirMetadata: fhirDoc({
    summary: 'FHIR CapabilityStatement',
    description:
      "What the FHIR R4 API serves (read and search interactions, JSON only). No key needed; counted against the anonymous limit of the caller's address.",
    parameters: [],
    schema: 'FhirResource',
    exampleFile: 'fhirMetadata.json',
    successText: 'The CapabilityStatement.',
  }),
  fhirPatientRead: fhirDoc({
    summary: 'Read a Patient',
    description: 'The chart patient as a FHIR R4 Patient (MRN identifier, US Core race/ethnicity extensions).',
    parameters: [fhirId('The patient id', 'demo-patient-1')],
    schema: 'FhirResource',
    exampleFile: 'fhirPatientRead.json',
    successText: 'The Patient.',
    notFound: true,
  }),
  fhirPatientEverything: fhirDoc({
    summary: 'Everything about a Patient ($everything)',
    description:
      'A searchset Bundle: the Patient, then the records of the HL7 summary (encounters, notes, assessments, lab reports), newest first, paged by `_count` with `next` links.',
    parameters: [fhirId('The patient id', 'demo-patient-1'), fhirCount, fhirPageToken],
    schema: 'FhirBundle',
    exampleFile: 'fhirPatientEverything.json',
    successText: 'One page of the Bundle.',
    notFound: true,
  }),
  fhirEncounterRead: fhirDoc({
    summary: 'Read an Encounter',
    description: 'An encounter with its diagnoses and orders contained (Condition, ServiceRequest). Its id carries its patient: `<patient>..<encounter>`.',
    parameters: [fhirId('`<patient>..<encounter>`', 'demo-patient-1..demo-encounter-1')],
    schema: 'FhirResource',
    exampleFile: 'fhirEncounterRead.json',
    successText: 'The Encounter.',
    notFound: true,
  }),
  fhirEncounterSearch: fhirDoc({
    summary: 'Search Encounters by patient',
    description: "A patient's encounters, newest first, paged.",
    parameters: [fhirPatient, fhirCount, fhirPageToken],
    schema: 'FhirBundle',
    exampleFile: 'fhirEncounterSearch.json',
    successText: 'One page of the searchset Bundle.',
  }),
  fhirDocumentReferenceRead: fhirDoc({
    summary: 'Read a DocumentReference (note)',
    description: 'A chart note: category clinical-note, type LOINC 11506-3, the text as a UTF-8 attachment.',
    parameters: [fhirId('`<patient>..<note>`', 'demo-patient-1..demo-note-1')],
    schema: 'FhirResource',
    exampleFile: 'fhirDocumentReferenceRead.json',
    successText: 'The DocumentReference.',
    notFound: true,
  }),
  fhirDocumentReferenceSearch: fhirDoc({
    summary: 'Search DocumentReferences by patient',
    description: "A patient's notes, newest first, paged.",
    parameters: [fhirPatient, fhirCount, fhirPageToken],
    schema: 'FhirBundle',
    exampleFile: 'fhirDocumentReferenceSearch.json',
    successText: 'One page of the searchset Bundle.',
  }),
  fhirPatientSearch: fhirDoc({
    summary: 'Search Patients by MRN (identifier) or id',
    description:
      'The chart patients matching every parameter sent: `identifier=system|value` with the system as Patient.identifier writes it (`urn:interop:mrn:<assigning authority>`; MRN and authority compared normalised), `_id` one to ten ids (OR). One of them is required. Read through the MRN index (no scans).',
    parameters: [
      optionalQuery(
        'identifier',
        'The MRN identifier, `system|value`. The system is required. Sent at most once.',
        { type: 'string', pattern: '^[^|]+\\|.+$' },
        'urn:interop:mrn:DEMO-HOSP|DEMO-000001',
      ),
      optionalQuery('_id', 'One to ten Patient ids, comma-separated (OR). Sent at most once.', { type: 'string', minLength: 1 }, 'demo-patient-1'),
      fhirCount,
    ],
    schema: 'FhirBundle',
    exampleFile: 'fhirPatientSearch.json',
    successText: 'The searchset Bundle (no `entry` when nothing matches).',
  }),
  fhirObservationRead: fhirDoc({
    summary: 'Read an Observation (assessment or lab result)',
    description:
      'An assessment (`<patient>..<assessment>`: items as components, the total as the value, the interpretation kept) or a lab Observation (`<patient>..<result>..<n>`: the n-th test of a lab result, category laboratory, as its DiagnosticReport contains it).',
    parameters: [fhirId('`<patient>..<assessment>` or `<patient>..<result>..<n>`', 'demo-patient-1..demo-assessment-1')],
    schema: 'FhirResource',
    exampleFile: 'fhirObservationRead.json',
    successText: 'The Observation.',
    notFound: true,
  }),
  fhirObservationSearch: fhirDoc({
    summary: 'Search Observations (US Core lab: patient, category, code, date)',
    description:
      "A patient's Observations: lab Observations (category `laboratory`, newest result first), then assessments (category `survey`), filtered by `category`, `code` and `date`, paged. An id that is no chart patient has no matches.",
    parameters: [
      fhirPatient,
      fhirCategory('`laboratory` or `survey` (system http://terminology.hl7.org/CodeSystem/observation-category).', 'laboratory'),
      fhirCode,
      fhirDate,
      fhirCount,
      fhirPageToken,
    ],
    schema: 'FhirBundle',
    exampleFile: 'fhirObservationSearch.json',
    successText: 'One page of the searchset Bundle.',
  }),
  fhirDiagnosticReportRead: fhirDoc({
    summary: 'Read a DiagnosticReport (lab result)',
    description: 'The current version of a lab result, its Observations contained.',
    parameters: [fhirId('`<patient>..<result>` (`_` in the result id written `.5F`)', 'demo-patient-1..lr.5Fd7afff4b04ce17c65f50dcb06f3e8664')],
    schema: 'FhirResource',
    exampleFile: 'fhirDiagnosticReportRead.json',
    successText: 'The DiagnosticReport.',
    notFound: true,
  }),
  fhirDiagnosticReportSearch: fhirDoc({
    summary: 'Search DiagnosticReports (US Core lab: patient, category, date)',
    description: "A patient's lab results, newest first, filtered by `category` and `date`, paged. An id that is no chart patient has no matches.",
    parameters: [
      fhirPatient,
      fhirCategory('`LAB` (system http://terminology.hl7.org/CodeSystem/v2-0074): every report here is one.', 'LAB'),
      fhirDate,
      fhirCount,
      fhirPageToken,
    ],
    schema: 'FhirBundle',
    exampleFile: 'fhirDiagnosticReportSearch.json',
    successText: 'One page of the searchset Bundle.',
  }),
  receiveFhirBundle: fhirIntakeDoc({
    summary: 'FHIR intake: a transaction or batch Bundle (lab results, forms)',
    description:
      'A `transaction` or `batch` Bundle whose entries POST DiagnosticReports (lab results: their Observations, Specimen and Patient as entries or contained), QuestionnaireResponses (forms), and the Patients, Observations, Specimens and ServiceRequests they reference. A transaction is all or nothing: any refused entry refuses the Bundle (one OperationOutcome, `issue.expression` per failing element) and nothing is stored; a batch answers each entry (`entry.response.status`, `outcome`). Lab results are filed as HL7 ORU results are (the same patient resolution, held for review when the patient is not resolved, the same answer either way); forms run the form intake (matching, inbox). The same `Bundle.identifier` (or `x-request-id`) with the same content answers the first outcome and stores nothing new; with other content a 409. At most 100 entries.',
    resourceType: 'Bundle',
    requestExample: 'receiveFhirBundle.request.json',
    requestText: 'A `transaction` or `batch` Bundle of POST entries.',
    success: {
      200: {
        kind: 'fhir',
        description: 'The `transaction-response` / `batch-response` Bundle.',
        schema: 'FhirResource',
        exampleFile: 'receiveFhirBundle.json',
      },
    },
  }),
  receiveFhirDiagnosticReport: fhirIntakeDoc({
    summary: 'FHIR intake: one lab result (DiagnosticReport)',
    description:
      "One US Core Laboratory DiagnosticReport, its Observations (every value[x] of the lab model: Quantity with comparator, CodeableConcept, Range, Ratio, string...), Specimen and Patient contained. The subject is a contained Patient with its identifier (the MRN; the identifier system is the assigning authority: your own, or the chart's `urn:interop:mrn:<authority>`), a logical reference by identifier, or `Patient/<chart patient id>`. Stored through the lab result writer of HL7 ORU intake; the sender is your partner's lab sender (`meta.source` when it names one of them). The answer is the same whether or not the patient is known.",
    resourceType: 'DiagnosticReport',
    requestExample: 'receiveFhirDiagnosticReport.request.json',
    requestText: 'One DiagnosticReport, its Observations contained.',
    success: {
      200: {
        kind: 'fhir',
        description: 'The same content was stored before: nothing new (OperationOutcome, information).',
        schema: 'FhirResource',
        exampleFile: 'receiveFhirDiagnosticReport.json',
      },
      201: {
        kind: 'fhir',
        description:
          'Stored (OperationOutcome, information: the resultId). `Location: DiagnosticReport/<id>` when the subject is `Patient/<chart patient id>`.',
        schema: 'FhirResource',
        exampleFile: 'receiveFhirDiagnosticReport.json',
      },
    },
  }),
  receiveFhirQuestionnaireResponse: fhirIntakeDoc({
    summary: 'FHIR intake: one completed form (QuestionnaireResponse)',
    description:
      'One SDC QuestionnaireResponse, its Patient contained: it runs the form intake of POST /receiveFormIntakeScope (source system = `meta.source` or `identifier.system`, a form source your partner owns; submission id = `identifier.value`; form id = `questionnaire`; answers of every value[x] keyed by linkId). The answer never says whether the patient is known or where the packet went.',
    resourceType: 'QuestionnaireResponse',
    requestExample: 'receiveFhirQuestionnaireResponse.request.json',
    requestText: 'One QuestionnaireResponse, its Patient contained.',
    success: {
      200: {
        kind: 'fhir',
        description: 'The same submission was received before: nothing new.',
        schema: 'FhirResource',
        exampleFile: 'receiveFhirQuestionnaireResponse.json',
      },
      201: {
        kind: 'fhir',
        description: 'Received (OperationOutcome, information: the packetId).',
        schema: 'FhirResource',
        exampleFile: 'receiveFhirQuestionnaireResponse.json',
      },
    },
  }),
  fhirRouteNotFound: {
    ...fhirDoc({
      summary: 'Any other FHIR path (404 OperationOutcome)',
      description:
        'Every path under /fhir that no other operation serves (an unknown resource type, an unsupported interaction such as `_history`) answers 404 with an OperationOutcome, so a FHIR client reads the refusal as FHIR. Reads nothing.',
      parameters: [
        {
          name: 'proxy+',
          in: 'path',
          required: true,
          description: 'The rest of the path (one or more segments).',
          schema: { type: 'string', minLength: 1 },
          example: 'Condition',
        },
      ],
      schema: 'FhirResource',
      exampleFile: 'fhirMetadata.json',
      successText: 'Never: every answer is a 404.',
      notFound: true,
    }),
    success: {},
  },
};

function fhirId(description: string, example: string): ParameterDoc {
  return {
    name: 'id',
    in: 'path',
    required: true,
    description: `${description}; \`.\`, \`_\` and \`:\` inside an id are written \`.2E\`, \`.5F\`, \`.3A\`.`,
    schema: { type: 'string', pattern: '^[A-Za-z0-9\\-.]{1,64}$' },
    example,
  };
}

/** A FHIR read or search: FHIR JSON success, OperationOutcome refusals (404 when it reads by id, 406 for a non-FHIR Accept). */
function fhirDoc(o: {
  summary: string;
  description: string;
  parameters: ParameterDoc[];
  schema: 'FhirResource' | 'FhirBundle';
  exampleFile: string;
  successText: string;
  notFound?: boolean;
}): EndpointDoc {
  return {
    summary: o.summary,
    description: `${o.description} Refusals are FHIR OperationOutcome with the same status and headers as elsewhere. See docs/fhir.md.`,
    tag: 'FHIR R4',
    parameters: o.parameters,
    success: { 200: { kind: 'fhir', description: o.successText, schema: o.schema, exampleFile: o.exampleFile } },
    problems: {
      ...((o.notFound
        ? {
            404: {
              description: 'No such record, or it belongs to another patient (the same answer either way).',
              examples: { notFound: { summary: 'unknown id', kind: 'notFound', detail: 'no resource with this id' } },
            },
          }
        : {}) as Record<number, ProblemDoc>),
      406: {
        description: 'Accept (or `_format`) excludes FHIR JSON.',
        examples: { notAcceptable: { summary: 'Accept: application/xml', kind: 'notAcceptable', detail: 'this endpoint produces application/fhir+json only' } },
      },
    },
    badRequest: {
      description: 'A parameter is unknown, repeated or malformed (one issue per parameter).',
      examples: { count: { summary: '_count out of range', kind: 'validation', detail: 'query parameters are missing or invalid' } },
    },
  };
}

/** A FHIR intake route: FHIR JSON body and answers, OperationOutcome refusals with `issue.expression`. */
function fhirIntakeDoc(o: {
  summary: string;
  description: string;
  resourceType: string;
  requestExample: string;
  requestText: string;
  success: Record<number, SuccessDoc>;
}): EndpointDoc {
  return {
    summary: o.summary,
    description: `${o.description} Refusals are FHIR OperationOutcome (\`issue.expression\` names each failing element). See docs/fhir.md "Intake".`,
    tag: 'FHIR R4',
    parameters: [],
    fhirRequestBody: {
      description: `${o.requestText} \`Content-Type: application/fhir+json\` (or application/json), at most ${BODY_LIMIT_TEXT}.`,
      resourceType: o.resourceType,
      exampleFile: o.requestExample,
    },
    replayHeader: true,
    success: o.success,
    problems: {
      403: {
        description:
          "The key lacks interop:ingest:fhir, or an identifier system is an assigning authority of another partner, or a form source or lab sender is not your partner's. Nothing stored.",
        examples: { authority: { summary: "another partner's authority", kind: 'forbidden', detail: 'the resource was refused: see each issue' } },
      },
      406: {
        description: 'Accept (or `_format`) excludes FHIR JSON.',
        examples: { notAcceptable: { summary: 'Accept: application/xml', kind: 'notAcceptable', detail: 'this endpoint produces application/fhir+json only' } },
      },
      409: {
        description:
          'The Bundle.identifier (or x-request-id) was used for other content, or is still being processed (Retry-After); or a form submission id was received with other content.',
        examples: { reused: { summary: 'Bundle.identifier reused', kind: 'conflict', detail: 'the resource was refused: see each issue' } },
      },
      413: {
        description: `The body exceeds ${BODY_LIMIT_TEXT}, or a form's answers exceed ${MAX_PACKET_CONTENT_BYTES} bytes.`,
        examples: { tooLarge: { summary: 'body too large', kind: 'payloadTooLarge', detail: BODY_TOO_LARGE_DETAIL } },
      },
      415: {
        description: 'The body was not sent as `application/fhir+json` (or `application/json`).',
        examples: {
          unsupported: { summary: 'XML body', kind: 'unsupportedMediaType', detail: 'the request body must be sent as Content-Type: application/json' },
        },
      },
    },
    badRequest: {
      description:
        'Not valid FHIR R4 JSON for this route, or an element the mapping needs is missing or unusable: one issue per failing element, with its FHIRPath in `expression`. Nothing stored.',
      examples: { invalid: { summary: 'status missing', kind: 'validation', detail: 'the resource was refused: see each issue' } },
    },
  };
}
