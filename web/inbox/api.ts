/** The inbox API as the page uses it: same origin, the staff ID token as a bearer token. */
export interface PacketSummary {
  packetId: string;
  state: string;
  reason?: string;
  sourceSystemId: string;
  formId: string;
  receivedAt: string;
  stateChangedAt: string;
  requestedPatientId?: string;
  candidateCount: number;
  topCandidateScore?: number;
}

export interface CandidateRecord {
  patientId: string;
  score: number;
  reasons: string[];
}

export interface HistoryEntry {
  at: string;
  action: string;
  state: string;
  from?: string;
  actor: string;
  staffUsername?: string;
  reason?: string;
  patientId?: string;
}

export interface PacketDetail {
  packetId: string;
  state: string;
  reason?: string;
  patientId?: string;
  requestedPatientId?: string;
  sourceSystemId: string;
  formId: string;
  formName?: string;
  submissionId: string;
  receivedAt: string;
  patient: { externalPatientId?: string; firstName: string; lastName: string; dob?: string; email?: string };
  answers: Record<string, unknown>;
  candidates: CandidateRecord[];
  history: HistoryEntry[];
}

export interface CandidateChart {
  patientId: string;
  role: 'candidate' | 'requested' | 'search' | 'routed';
  score?: number;
  name: { family: string; given?: string; middle?: string };
  birthDate?: string;
  sex?: string;
  mrn: string;
  assigningAuthority: string;
  address?: { line1?: string; line2?: string; city?: string; state?: string; postalCode?: string; country?: string };
  email?: string;
  phone?: string;
}

/** A record HL7 intake held for review (GET /interopInbox/held). */
export interface HeldSummary {
  heldId: string;
  kind: 'document' | 'identity' | 'lab-result';
  state: 'held' | 'routed';
  reason: string;
  receivedAt: string;
  partnerId: string;
  sender: string;
  person: {
    name?: { family: string; given?: string; middle?: string };
    birthDate?: string;
    sex?: string;
    identifiers: Array<{ value: string; authority: string }>;
  };
  description: { author?: { name: { family: string; given?: string } }; createdAt?: string; documentNumber?: string; resultCount?: number };
  routedTo?: string;
  routedAt?: string;
}

export interface HeldDetail extends HeldSummary {
  sourceMessageId: string;
  routedBy?: string;
  /** once routed: the chart patient it went to */
  routedChart?: { patientId: string; name: { family: string; given?: string; middle?: string }; birthDate?: string; mrn: string; assigningAuthority: string };
  note?: { noteId: string; text: string; createdAt: string; author: { name: { family: string; given?: string } }; completionStatus?: string };
  resultIds?: string[];
  demographics?: {
    name?: { family: string; given?: string; middle?: string };
    birthDate?: string;
    sex?: string;
    mrn?: string;
    assigningAuthority?: string;
    address?: { line1?: string; line2?: string; city?: string; state?: string; postalCode?: string };
  };
}

export type PatientSearchQuery = { mrn: string } | { lastName: string; birthDate: string; firstName?: string };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly body: Record<string, unknown>,
  ) {
    super(detail);
  }
}

export function inboxApi(base: string, token: () => string) {
  const request = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(new URL(path, base), {
      method,
      headers: { authorization: `Bearer ${token()}`, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      cache: 'no-store',
    });
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok) throw new ApiError(response.status, typeof json.detail === 'string' ? json.detail : `request failed (${response.status})`, json);
    return json as T;
  };
  return {
    list: (cursor?: string) =>
      request<{ items: PacketSummary[]; nextCursor?: string }>(
        'GET',
        `interopInbox?state=pending_review&limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    packet: (id: string) => request<PacketDetail>('GET', `interopInbox/${encodeURIComponent(id)}`),
    candidates: (id: string) => request<{ charts: CandidateChart[] }>('GET', `interopInbox/${encodeURIComponent(id)}/candidates`),
    // a POST: the MRN, name and birth date searched for travel in the body, never in a URL
    search: (id: string, query: PatientSearchQuery) =>
      request<{ charts: CandidateChart[]; more: boolean }>('POST', `interopInbox/${encodeURIComponent(id)}/patientSearch`, query),
    route: (id: string, patientId: string) =>
      request<{ routedTo: string; state: string }>('POST', `interopInbox/${encodeURIComponent(id)}/route`, { patientId }),
    heldList: (state: 'held' | 'routed', cursor?: string) =>
      request<{ items: HeldSummary[]; nextCursor?: string }>(
        'GET',
        `interopInbox/held?state=${state}&limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    held: (id: string) => request<HeldDetail>('GET', `interopInbox/held/${encodeURIComponent(id)}`),
    heldSearch: (id: string, query: PatientSearchQuery) =>
      request<{ charts: CandidateChart[]; more: boolean }>('POST', `interopInbox/held/${encodeURIComponent(id)}/patientSearch`, query),
    heldRoute: (id: string, patientId: string) =>
      request<{ routedTo: string; kind: string }>('POST', `interopInbox/held/${encodeURIComponent(id)}/route`, { patientId }),
  };
}
export type InboxApi = ReturnType<typeof inboxApi>;
