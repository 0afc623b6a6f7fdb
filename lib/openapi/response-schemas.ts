/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses) of the JSON success bodies. Request bodies are not
 * here: they are the schemas in schemas/, which the endpoints validate with.
 */
import { PACKET_REASONS, PACKET_STATES } from '../forms/types';
import { PURPOSES_OF_USE, RELATIONSHIP_SOURCES } from '../relationships/relationships';

const packetState = { type: 'string', enum: [...PACKET_STATES] };
const reason = { type: 'string', enum: [...PACKET_REASONS] };
const instant = { type: 'string', format: 'date-time' };
const text = { type: 'string', minLength: 1 };
const answerScalar = { type: ['string', 'number', 'boolean', 'null'] };

const heldState = { type: 'string', enum: ['held', 'routed'] };
const heldKind = { type: 'string', enum: ['document', 'identity', 'lab-result'] };
const personName = {
  type: 'object',
  required: ['family'],
  properties: { family: { type: 'string' }, given: { type: 'string' }, middle: { type: 'string' }, prefix: { type: 'string' }, suffix: { type: 'string' } },
};
const clinician = { type: 'object', required: ['name'], properties: { id: { type: 'string' }, name: personName } };
/** A record HL7 intake held for review, as the list shows it (lib/intake/held-review.ts). */
const heldSummary = {
  type: 'object',
  required: ['heldId', 'kind', 'state', 'reason', 'receivedAt', 'partnerId', 'sender', 'person', 'description'],
  properties: {
    heldId: { type: 'string', pattern: '^held-\\d{14}-[0-9a-f]{24}$' },
    kind: heldKind,
    state: heldState,
    reason: {
      type: 'string',
      // lib/intake/held-records.ts HELD_REASONS
      enum: ['patient-unresolved', 'demographics-differ', 'no-relationship', 'link-disputed', 'no-document-to-replace', 'document-number-reused'],
      description:
        "no chart patient named; the demographics disagree with the chart; the partner has no relationship with the patient named; a link of the partner identity the chart now contradicts (its MRN is another patient's); a replacement naming no document of the sender; a document number the chart holds with other content",
    },
    receivedAt: instant,
    partnerId: text,
    sender: { type: 'string', description: 'MSH-4 sending facility' },
    person: {
      type: 'object',
      description: 'the person as the sender described them (PID)',
      required: ['identifiers'],
      properties: {
        name: personName,
        birthDate: { type: 'string' },
        sex: { type: 'string' },
        identifiers: {
          type: 'array',
          items: { type: 'object', required: ['value', 'authority'], properties: { value: { type: 'string' }, authority: { type: 'string' } } },
        },
      },
    },
    description: {
      type: 'object',
      description: 'document: author, createdAt, documentNumber (never the text); lab-result: resultCount; identity: empty',
      properties: { author: clinician, createdAt: { type: 'string' }, documentNumber: { type: 'string' }, resultCount: { type: 'integer', minimum: 1 } },
    },
    routedTo: text,
    routedAt: instant,
  },
} as const;

/** Chart demographics shown to a reviewer (the candidates read and the chart search). */
const candidateCharts = {
  type: 'array',
  items: {
    type: 'object',
    required: ['patientId', 'role', 'name', 'mrn', 'assigningAuthority'],
    properties: {
      patientId: text,
      role: {
        type: 'string',
        enum: ['candidate', 'requested', 'search', 'routed'],
        description: "a matcher candidate, the patient the sender named, a hit of a reviewer's chart search, or the patient a reviewer routed the packet to",
      },
      score: { type: 'number' },
      name: {
        type: 'object',
        required: ['family'],
        properties: {
          family: { type: 'string' },
          given: { type: 'string' },
          middle: { type: 'string' },
          prefix: { type: 'string' },
          suffix: { type: 'string' },
        },
      },
      birthDate: { type: 'string' },
      sex: { type: 'string' },
      mrn: text,
      assigningAuthority: text,
      address: {
        type: 'object',
        properties: {
          line1: { type: 'string' },
          line2: { type: 'string' },
          city: { type: 'string' },
          state: { type: 'string' },
          postalCode: { type: 'string' },
          country: { type: 'string' },
        },
      },
      email: { type: 'string' },
      phone: { type: 'string' },
    },
  },
};

export const ResponseSchemas = {
  LabResultReceipt: {
    type: 'object',
    required: ['status', 'message', 'requestId', 'resultId', 'version', 'current', 'duplicate', 'notification'],
    properties: {
      status: { const: 'success' },
      message: text,
      requestId: text,
      resultId: { type: 'string', pattern: '^lr_[0-9a-f]{32}$' },
      version: { type: 'string', pattern: '^lv_[0-9a-f]{32}$', description: 'the version id of this submission' },
      current: { type: 'boolean', description: "this version is the result's current version after the save" },
      duplicate: { type: 'boolean', description: 'this exact submission had already been stored (nothing new written)' },
      notification: { type: 'string', enum: ['sent', 'pending'], description: 'pending: the publish failed; the retry job sends it' },
    },
  },
  FormPacketReceipt: {
    type: 'object',
    description:
      'The same answer for every accepted packet (routed, held, queued or the same submission again): nothing in it tells whether a patient exists or where the packet went.',
    required: ['status', 'packetId', 'requestId'],
    additionalProperties: false,
    properties: {
      status: { const: 'accepted' },
      packetId: { type: 'string', pattern: '^fp_[0-9a-f]{32}$' },
      requestId: text,
    },
  },
  InboxPage: {
    type: 'object',
    required: ['state', 'limit', 'items', 'requestId'],
    properties: {
      state: packetState,
      limit: { type: 'integer', minimum: 1 },
      items: {
        type: 'array',
        items: {
          type: 'object',
          required: ['packetId', 'state', 'sourceSystemId', 'formId', 'receivedAt', 'stateChangedAt', 'candidateCount'],
          properties: {
            packetId: { type: 'string' },
            state: packetState,
            reason,
            sourceSystemId: text,
            formId: text,
            receivedAt: instant,
            stateChangedAt: instant,
            requestedPatientId: text,
            candidateCount: { type: 'integer', minimum: 0 },
            topCandidateScore: { type: 'number' },
          },
        },
      },
      nextCursor: { type: 'string', description: 'pass as `cursor` for the next page' },
      requestId: text,
    },
  },
  InboxPacket: {
    type: 'object',
    required: [
      'packetId',
      'state',
      'sourceSystemId',
      'formId',
      'submissionId',
      'partnerId',
      'receivedAt',
      'stateChangedAt',
      'patient',
      'answers',
      'candidates',
      'history',
      'requestId',
    ],
    properties: {
      packetId: { type: 'string' },
      state: packetState,
      reason,
      patientId: text,
      requestedPatientId: text,
      sourceSystemId: text,
      formId: text,
      submissionId: text,
      partnerId: text,
      receivedAt: instant,
      stateChangedAt: instant,
      formName: { type: 'string' },
      patient: {
        type: 'object',
        required: ['firstName', 'lastName'],
        properties: {
          externalPatientId: { type: 'string' },
          firstName: { type: 'string' },
          lastName: { type: 'string' },
          dob: { type: 'string' },
          email: { type: 'string' },
        },
      },
      answers: { type: 'object', additionalProperties: { anyOf: [answerScalar, { type: 'array', items: answerScalar }] } },
      candidates: {
        type: 'array',
        items: {
          type: 'object',
          required: ['patientId', 'score', 'reasons'],
          properties: { patientId: text, score: { type: 'number' }, reasons: { type: 'array', items: { type: 'string' } } },
        },
      },
      history: {
        type: 'array',
        items: {
          type: 'object',
          required: ['at', 'action', 'state', 'actor'],
          properties: {
            at: instant,
            action: { type: 'string', enum: ['received', 'matched', 'held_for_review', 'requeued', 'routed_manually', 'assessed'] },
            state: packetState,
            from: packetState,
            actor: { type: 'string', enum: ['api-key', 'staff', 'matcher', 'sweeper'] },
            staffUsername: { type: 'string', description: 'the signed-in reviewer (actor `staff`)' },
            keyId: text,
            partnerId: text,
            reason,
            patientId: text,
          },
        },
      },
      requestId: text,
    },
  },
  InboxCandidates: {
    type: 'object',
    required: ['packetId', 'charts', 'requestId'],
    properties: {
      packetId: { type: 'string' },
      charts: candidateCharts,
      requestId: text,
    },
  },
  PatientSearchResult: {
    type: 'object',
    required: ['packetId', 'charts', 'more', 'requestId'],
    properties: {
      packetId: { type: 'string' },
      charts: candidateCharts,
      more: { type: 'boolean', description: 'more patients fit than the 20 answered: narrow the search' },
      requestId: text,
    },
  },
  RouteReceipt: {
    type: 'object',
    required: ['status', 'packetId', 'routedTo', 'state', 'requestId'],
    properties: {
      status: { const: 'routed' },
      packetId: { type: 'string' },
      routedTo: text,
      state: { const: 'routed_manually' },
      requestId: text,
    },
  },
  DisclosurePage: {
    type: 'object',
    required: ['patientId', 'from', 'to', 'limit', 'items', 'requestId'],
    properties: {
      patientId: text,
      from: text,
      to: text,
      limit: { type: 'integer', minimum: 1 },
      items: {
        type: 'array',
        items: {
          type: 'object',
          required: ['at', 'requestId', 'partnerId', 'keyId', 'patientId', 'endpoint', 'action', 'purposeOfUse', 'purposeSource'],
          properties: {
            at: text,
            requestId: text,
            partnerId: text,
            keyId: text,
            staffUsername: text,
            patientId: text,
            endpoint: text,
            action: text,
            resourceIds: { type: 'object', additionalProperties: { type: 'string' } },
            purposeOfUse: text,
            purposeSource: { type: 'string', enum: ['requested', 'relationship', 'default'] },
          },
        },
      },
      nextCursor: { type: 'string', description: 'pass as `cursor` for the next page' },
      requestId: text,
    },
  },
  HeldPage: {
    type: 'object',
    required: ['state', 'limit', 'items', 'requestId'],
    properties: {
      state: heldState,
      limit: { type: 'integer', minimum: 1 },
      items: { type: 'array', items: heldSummary },
      nextCursor: { type: 'string', description: 'pass as `cursor` for the next page' },
      requestId: text,
    },
  },
  HeldRecord: {
    type: 'object',
    required: [...heldSummary.required, 'sourceMessageId', 'requestId'],
    properties: {
      ...heldSummary.properties,
      sourceMessageId: { type: 'string', description: 'MSH-10 of the message' },
      routedBy: { type: 'string', description: 'the reviewer (staff username or key id)' },
      routedChart: {
        type: 'object',
        description: 'once routed: the chart patient it went to, by name and MRN (absent when that patient is no longer in the chart)',
        required: ['patientId', 'name', 'mrn', 'assigningAuthority'],
        properties: {
          patientId: text,
          name: { type: 'object', required: ['family'], properties: { family: { type: 'string' }, given: { type: 'string' }, middle: { type: 'string' } } },
          birthDate: { type: 'string' },
          mrn: text,
          assigningAuthority: text,
        },
      },
      note: {
        type: 'object',
        description: 'document: the note as the sender wrote it, text included',
        required: ['noteId', 'author', 'createdAt', 'text'],
        properties: {
          noteId: text,
          documentNumber: { type: 'string' },
          author: clinician,
          createdAt: { type: 'string' },
          text: { type: 'string' },
          completionStatus: { type: 'string' },
          authenticatedBy: clinician,
          authenticatedAt: { type: 'string' },
          provenance: { type: 'object' },
          version: { type: 'integer' },
        },
      },
      resultIds: { type: 'array', items: { type: 'string' }, description: 'lab-result: the held results' },
      demographics: { type: 'object', description: "identity: the partner's latest view of the person (a chart patient's fields without patientId)" },
      visits: {
        type: 'array',
        items: { type: 'object' },
        description: "identity: the partner's visits (PV1: visitNumber, patientClass, location, attending, admitAt, dischargeAt), one per visit number",
      },
      diagnoses: { type: 'array', items: { type: 'object' }, description: "identity: the partner's latest DG1 list (code, type, at)" },
      allergies: { type: 'array', items: { type: 'object' }, description: "identity: the partner's latest AL1 list (allergen, type, severity, reactions)" },
      requestId: text,
    },
  },
  HeldPatientSearchResult: {
    type: 'object',
    required: ['heldId', 'charts', 'more', 'requestId'],
    properties: {
      heldId: { type: 'string' },
      charts: candidateCharts,
      more: { type: 'boolean', description: 'more patients fit than the 20 answered: narrow the search' },
      requestId: text,
    },
  },
  HeldRouteReceipt: {
    type: 'object',
    required: ['status', 'heldId', 'kind', 'routedTo', 'requestId'],
    properties: {
      status: { const: 'routed' },
      heldId: { type: 'string' },
      kind: heldKind,
      routedTo: text,
      noteId: { type: 'string', description: "document: the chart note's id" },
      resultIds: { type: 'array', items: { type: 'string' }, description: 'lab-result: the results now filed under the patient' },
      requestId: text,
    },
  },
  HeldUnlinkReceipt: {
    type: 'object',
    required: ['status', 'heldId', 'unlinkedFrom', 'relationshipEnded', 'requestId'],
    properties: {
      status: { const: 'unlinked' },
      heldId: { type: 'string' },
      unlinkedFrom: { type: 'string', description: 'the patient the identity was linked to' },
      relationshipEnded: { type: 'boolean' },
      requestId: text,
    },
  },
  RelationshipList: {
    type: 'object',
    required: ['patientId', 'items', 'requestId'],
    properties: {
      patientId: text,
      items: { type: 'array', items: { $ref: '#/components/schemas/PartnerPatientRelationship' } },
      requestId: text,
    },
  },
  RelationshipEnded: {
    type: 'object',
    required: ['status', 'relationship', 'requestId'],
    properties: { status: { const: 'ended' }, relationship: { $ref: '#/components/schemas/PartnerPatientRelationship' }, requestId: text },
  },
  PartnerPatientRelationship: {
    type: 'object',
    required: ['partnerId', 'patientId', 'purpose', 'source', 'since', 'createdBy'],
    properties: {
      partnerId: text,
      patientId: text,
      purpose: { type: 'string', enum: [...PURPOSES_OF_USE], description: 'HL7 v3 PurposeOfUse' },
      source: { type: 'string', enum: [...RELATIONSHIP_SOURCES] },
      since: text,
      until: { type: 'string', description: 'the instant it stops holding (ISO 8601 UTC)' },
      createdBy: text,
      endedAt: text,
      endedBy: text,
      holding: { type: 'boolean', description: 'holds at the time of the request (listing only)' },
    },
  },
  OpenApiDocument: {
    type: 'object',
    description: 'An OpenAPI 3.1 document (this one).',
    required: ['openapi', 'info', 'paths'],
    properties: {
      openapi: { type: 'string', pattern: '^3\\.1\\.' },
      info: { type: 'object', required: ['title', 'version'] },
      paths: { type: 'object' },
    },
  },
} as const satisfies Record<string, Record<string, unknown>>;
