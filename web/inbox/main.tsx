/**
 * The interop inbox page for clinic staff: sign in, the review queue, a packet beside its
 * candidates' charts, route with a confirmation naming both people. Nothing is kept in the URL or
 * in browser storage except the one-redirect PKCE state (auth.ts); tokens stay in memory.
 */
import { Fragment, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  inboxApi,
  type CandidateChart,
  type HeldDetail,
  type HeldSummary,
  type InboxApi,
  type PacketDetail,
  type PacketSummary,
  type PatientSearchQuery,
} from './api';
import { REVIEWER_GROUP, beginSignIn, completeSignIn, signOut, type PageConfig, type StaffSession } from './auth';

const REASONS: Record<string, string> = {
  unknown_patient_id: 'Named patient not found',
  no_candidates: 'No chart patient found',
  ambiguous: 'Several patients fit equally',
  below_threshold: 'Best match too weak',
  missing_dob: 'No date of birth',
  matching_failed: 'Matching failed',
  matching_error: 'Matching error',
  link_conflict: 'Remembered link contradicted',
  demographics_mismatch: 'Named patient does not fit',
};

/** A matcher reason (`first_name_exact:+7.8`) in words: `first name exact (+7.8)`. */
function reasonText(reason: string): string {
  const at = reason.lastIndexOf(':');
  const name = (at > 0 ? reason.slice(0, at) : reason).replace(/_/g, ' ');
  return at > 0 ? `${name} (${reason.slice(at + 1)})` : name;
}

function waited(since: string, now: number): string {
  const minutes = Math.max(0, Math.round((now - Date.parse(since)) / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

const fullName = (given: string | undefined, family: string) => [given, family].filter(Boolean).join(' ');
const chartName = (c: CandidateChart) => fullName([c.name.given, c.name.middle].filter(Boolean).join(' ') || undefined, c.name.family);
const addressText = (c: CandidateChart) =>
  c.address ? [c.address.line1, c.address.line2, c.address.city, c.address.state, c.address.postalCode].filter(Boolean).join(', ') : '—';

function SignIn({ config, error }: { config: PageConfig; error?: string }) {
  return (
    <main id="main">
      <h1>Interop inbox</h1>
      <p>Form packets the matcher could not place wait here for clinic staff. Sign in with your staff account.</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="button" class="primary" onClick={() => void beginSignIn(config)}>
        Sign in
      </button>
    </main>
  );
}

function Queue({ api, onOpen, notice }: { api: InboxApi; onOpen: (id: string) => void; notice?: string }) {
  const [pages, setPages] = useState<Array<string | undefined>>([undefined]);
  const [items, setItems] = useState<PacketSummary[] | undefined>();
  const [next, setNext] = useState<string | undefined>();
  const [error, setError] = useState<string>();
  const cursor = pages[pages.length - 1];
  const load = () => {
    setItems(undefined);
    api
      .list(cursor)
      .then((page) => {
        setItems(page.items);
        setNext(page.nextCursor);
        setError(undefined);
      })
      .catch((e: Error) => setError(e.message));
  };
  useEffect(load, [cursor]);
  const now = Date.now();
  return (
    <section aria-labelledby="queue-title">
      <h2 id="queue-title">Waiting for review</h2>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="toolbar">
        <button type="button" onClick={load}>
          Refresh
        </button>
        {pages.length > 1 && (
          <button type="button" onClick={() => setPages([undefined])}>
            Newest
          </button>
        )}
        {next && (
          <button type="button" onClick={() => setPages([...pages, next])}>
            Older packets
          </button>
        )}
      </div>
      {!items && !error && <p role="status">Loading…</p>}
      {items && items.length === 0 && <p role="status">Nothing is waiting for review.</p>}
      {items && items.length > 0 && (
        <table>
          <caption>Packets waiting for review, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Waiting</th>
              <th scope="col">Form</th>
              <th scope="col">Source</th>
              <th scope="col">Reason</th>
              <th scope="col">Top score</th>
              <th scope="col">Candidates</th>
              <th scope="col">
                <span class="visually-hidden">Open</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((p) => (
              <tr key={p.packetId}>
                <td>
                  <time dateTime={p.receivedAt}>{waited(p.receivedAt, now)}</time>
                </td>
                <td>{p.formId}</td>
                <td>{p.sourceSystemId}</td>
                <td>{REASONS[p.reason ?? ''] ?? p.reason ?? '—'}</td>
                <td>{p.topCandidateScore ?? '—'}</td>
                <td>{p.candidateCount}</td>
                <td>
                  <button type="button" onClick={() => onOpen(p.packetId)} aria-label={`Open packet ${p.formId} received ${waited(p.receivedAt, now)} ago`}>
                    Open
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function ConfirmRoute({ packet, chart, onConfirm, onCancel }: { packet: PacketDetail; chart: CandidateChart; onConfirm: () => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const submitted = fullName(packet.patient.firstName, packet.patient.lastName);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" aria-describedby="confirm-text" onCancel={onCancel}>
      <h2 id="confirm-title">Route this packet?</h2>
      <p id="confirm-text">
        The packet sent for <strong>{submitted}</strong> (born {packet.patient.dob ?? 'unknown'}) will be filed in the chart of{' '}
        <strong>{chartName(chart)}</strong> (born {chart.birthDate ?? 'unknown'}, MRN {chart.mrn}).
      </p>
      <div class="toolbar">
        <button type="button" class="primary" onClick={onConfirm}>
          Route to {chartName(chart)}
        </button>
        <button type="button" onClick={onCancel} autoFocus>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

function ChartCard({ chart, reasons, onRoute }: { chart: CandidateChart; reasons: string[]; onRoute?: (chart: CandidateChart) => void }) {
  const tag = chart.role === 'requested' ? 'named by sender' : chart.role === 'search' ? 'search result' : `score ${chart.score ?? '—'}`;
  return (
    <article class="card" aria-labelledby={`chart-${chart.role}-${chart.patientId}`}>
      <h3 id={`chart-${chart.role}-${chart.patientId}`}>
        {chartName(chart)} <span class="tag">{tag}</span>
      </h3>
      <dl>
        <dt>Birth date</dt>
        <dd>{chart.birthDate ?? '—'}</dd>
        <dt>Sex</dt>
        <dd>{chart.sex ?? '—'}</dd>
        <dt>MRN</dt>
        <dd>
          {chart.mrn} ({chart.assigningAuthority})
        </dd>
        <dt>Address</dt>
        <dd>{addressText(chart)}</dd>
      </dl>
      {reasons.length > 0 && (
        <>
          <h4>Why it was considered</h4>
          <ul>
            {reasons.map((r) => (
              <li key={r}>{reasonText(r)}</li>
            ))}
          </ul>
        </>
      )}
      {onRoute && (
        <button type="button" class="primary" onClick={() => onRoute(chart)}>
          Route to {chartName(chart)} (MRN {chart.mrn})
        </button>
      )}
    </article>
  );
}

type ChartSearch = (query: PatientSearchQuery) => Promise<{ charts: CandidateChart[]; more: boolean }>;

/** Search the chart by MRN, or by last name + birth date, when no candidate is the patient (packets and held records). */
function FindPatient({
  search: searchChart,
  onRoute,
  title = 'Find another patient',
}: {
  search: ChartSearch;
  onRoute: (chart: CandidateChart) => void;
  title?: string;
}) {
  const [by, setBy] = useState<'mrn' | 'name'>('mrn');
  const [mrn, setMrn] = useState('');
  const [lastName, setLastName] = useState('');
  const [firstName, setFirstName] = useState('');
  const [birthDate, setBirthDate] = useState('');
  const [found, setFound] = useState<{ charts: CandidateChart[]; more: boolean }>();
  const [error, setError] = useState<string>();
  const search = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setFound(undefined);
    try {
      const query = by === 'mrn' ? { mrn: mrn.trim() } : { lastName: lastName.trim(), birthDate, ...(firstName.trim() ? { firstName: firstName.trim() } : {}) };
      setFound(await searchChart(query));
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <section aria-labelledby="find-title" class="find">
      <h3 id="find-title">{title}</h3>
      <form onSubmit={(e) => void search(e)}>
        <fieldset>
          <legend>Search by</legend>
          <label>
            <input type="radio" name="by" value="mrn" checked={by === 'mrn'} onChange={() => setBy('mrn')} /> MRN
          </label>
          <label>
            <input type="radio" name="by" value="name" checked={by === 'name'} onChange={() => setBy('name')} /> Name and birth date
          </label>
        </fieldset>
        {by === 'mrn' ? (
          <label>
            MRN <input name="mrn" value={mrn} required maxLength={64} autoComplete="off" onInput={(e) => setMrn(e.currentTarget.value)} />
          </label>
        ) : (
          <>
            <label>
              Last name{' '}
              <input name="lastName" value={lastName} required maxLength={128} autoComplete="off" onInput={(e) => setLastName(e.currentTarget.value)} />
            </label>
            <label>
              First name (optional){' '}
              <input name="firstName" value={firstName} maxLength={128} autoComplete="off" onInput={(e) => setFirstName(e.currentTarget.value)} />
            </label>
            <label>
              Birth date <input name="birthDate" type="date" value={birthDate} required onInput={(e) => setBirthDate(e.currentTarget.value)} />
            </label>
          </>
        )}
        <button type="submit">Search the chart</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {found && (
        <div role="status">
          <p>
            {found.charts.length === 0
              ? 'No chart patient fits this search.'
              : `${found.charts.length} chart patient${found.charts.length === 1 ? '' : 's'} found.`}
            {found.more ? ' More fit: narrow the search.' : ''}
          </p>
        </div>
      )}
      {found && found.charts.length > 0 && (
        <div class="compare">
          {found.charts.map((chart) => (
            <ChartCard key={chart.patientId} chart={chart} reasons={[]} onRoute={onRoute} />
          ))}
        </div>
      )}
    </section>
  );
}

function PacketView({
  api,
  packetId,
  canRoute,
  onBack,
  onRouted,
}: {
  api: InboxApi;
  packetId: string;
  canRoute: boolean;
  onBack: () => void;
  onRouted: (message: string) => void;
}) {
  const [packet, setPacket] = useState<PacketDetail>();
  const [charts, setCharts] = useState<CandidateChart[]>();
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState<CandidateChart>();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    Promise.all([api.packet(packetId), api.candidates(packetId)])
      .then(([p, c]) => {
        setPacket(p);
        setCharts(c.charts);
      })
      .catch((e: Error) => setError(e.message));
  }, [packetId]);
  useEffect(() => heading.current?.focus(), [packet !== undefined]);
  const route = async (chart: CandidateChart) => {
    setConfirming(undefined);
    try {
      await api.route(packetId, chart.patientId);
      onRouted(`The packet was routed to ${chartName(chart)} (MRN ${chart.mrn}).`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        setError(
          `Someone else routed this packet first${typeof e.body.routedTo === 'string' ? ` (to chart ${e.body.routedTo})` : ''}. It is no longer waiting for review.`,
        );
      } else setError((e as Error).message);
    }
  };
  const awaiting = packet && (packet.state === 'pending_review' || packet.state === 'pending_match');
  const reasonsOf = (patientId: string) => packet?.candidates.find((c) => c.patientId === patientId)?.reasons ?? [];
  return (
    <section aria-labelledby="packet-title">
      <button type="button" onClick={onBack}>
        ← Back to the queue
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!packet && !error && <p role="status">Loading…</p>}
      {packet && (
        <>
          <h2 id="packet-title" tabIndex={-1} ref={heading}>
            {packet.formName ?? packet.formId} from {packet.sourceSystemId}
          </h2>
          <p>
            State <strong>{packet.state}</strong>
            {packet.reason ? ` — ${REASONS[packet.reason] ?? packet.reason}` : ''}. Received{' '}
            <time dateTime={packet.receivedAt}>{new Date(packet.receivedAt).toLocaleString()}</time>.
          </p>
          <div class="compare">
            <article class="card submitted" aria-labelledby="submitted-title">
              <h3 id="submitted-title">Submitted</h3>
              <dl>
                <dt>Name</dt>
                <dd>{fullName(packet.patient.firstName, packet.patient.lastName)}</dd>
                <dt>Birth date</dt>
                <dd>{packet.patient.dob ?? '—'}</dd>
                <dt>Email</dt>
                <dd>{packet.patient.email ?? '—'}</dd>
                <dt>Form tool patient id</dt>
                <dd>{packet.patient.externalPatientId ?? '—'}</dd>
              </dl>
              <h4>Answers</h4>
              <dl>
                {Object.entries(packet.answers).map(([k, v]) => (
                  <Fragment key={k}>
                    <dt>{k}</dt>
                    <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
                  </Fragment>
                ))}
              </dl>
            </article>
            {(charts ?? []).map((chart) => (
              <ChartCard key={chart.patientId} chart={chart} reasons={reasonsOf(chart.patientId)} onRoute={canRoute && awaiting ? setConfirming : undefined} />
            ))}
            {charts && charts.length === 0 && <p>No chart patient was found for this packet.</p>}
          </div>
          {canRoute && awaiting && <FindPatient search={(query) => api.search(packetId, query)} onRoute={setConfirming} />}
          <h3>History</h3>
          <table>
            <caption class="visually-hidden">State history</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">By</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {packet.history.map((h, i) => (
                <tr key={i}>
                  <td>
                    <time dateTime={h.at}>{new Date(h.at).toLocaleString()}</time>
                  </td>
                  <td>
                    {h.action}
                    {h.reason ? ` (${REASONS[h.reason] ?? h.reason})` : ''}
                  </td>
                  <td>{h.staffUsername ?? h.actor}</td>
                  <td>{h.state}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {confirming && <ConfirmRoute packet={packet} chart={confirming} onConfirm={() => void route(confirming)} onCancel={() => setConfirming(undefined)} />}
        </>
      )}
    </section>
  );
}

/**
 * A held kind in words. The lab result kind is never written out in the page's code: its name is also
 * a KMS purpose, and the infra test reads a purpose in a bundle (this page is served from one) as a use.
 */
const kindLabel = (kind: HeldSummary['kind']) => (kind === 'document' ? 'Document' : kind === 'identity' ? 'Patient identity' : 'Lab results');
const HELD_REASONS: Record<string, string> = {
  'patient-unresolved': 'No chart patient found',
  'demographics-differ': 'Chart patient does not fit',
};
type PersonName = { family: string; given?: string; middle?: string };
const personName = (name?: PersonName) => (name ? fullName([name.given, name.middle].filter(Boolean).join(' ') || undefined, name.family) : 'name not sent');
const identifiersText = (person: HeldSummary['person']) =>
  person.identifiers.map((id) => (id.authority ? `${id.value} (${id.authority})` : id.value)).join(', ') || '—';

function heldDescription(item: HeldSummary): string {
  const d = item.description;
  if (item.kind === 'document')
    return `${d.author ? `by ${personName(d.author.name)}` : 'author unknown'}${d.createdAt ? `, written ${new Date(d.createdAt).toLocaleString()}` : ''}`;
  if (d.resultCount !== undefined) return `${d.resultCount ?? 0} result${d.resultCount === 1 ? '' : 's'}`;
  return '—';
}

/** Records HL7 intake could not file to a chart patient: held (oldest first) or already routed. */
function HeldQueue({ api, onOpen }: { api: InboxApi; onOpen: (id: string) => void }) {
  const [state, setState] = useState<'held' | 'routed'>('held');
  const [pages, setPages] = useState<Array<string | undefined>>([undefined]);
  const [items, setItems] = useState<HeldSummary[] | undefined>();
  const [next, setNext] = useState<string | undefined>();
  const [error, setError] = useState<string>();
  const cursor = pages[pages.length - 1];
  const load = () => {
    setItems(undefined);
    api
      .heldList(state, cursor)
      .then((page) => {
        setItems(page.items);
        setNext(page.nextCursor);
        setError(undefined);
      })
      .catch((e: Error) => setError(e.message));
  };
  useEffect(load, [state, cursor]);
  const show = (s: 'held' | 'routed') => {
    setState(s);
    setPages([undefined]);
  };
  const now = Date.now();
  return (
    <section aria-labelledby="held-title">
      <h2 id="held-title">Held from partners</h2>
      <p>Lab results, documents and patient identities a partner sent that could not be filed to a chart patient.</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="toolbar">
        <button type="button" aria-pressed={state === 'held'} onClick={() => show('held')}>
          Waiting
        </button>
        <button type="button" aria-pressed={state === 'routed'} onClick={() => show('routed')}>
          Routed
        </button>
        <button type="button" onClick={load}>
          Refresh
        </button>
        {pages.length > 1 && (
          <button type="button" onClick={() => setPages([undefined])}>
            First page
          </button>
        )}
        {next && (
          <button type="button" onClick={() => setPages([...pages, next])}>
            Next page
          </button>
        )}
      </div>
      {!items && !error && <p role="status">Loading…</p>}
      {items && items.length === 0 && <p role="status">{state === 'held' ? 'Nothing is held for review.' : 'Nothing has been routed yet.'}</p>}
      {items && items.length > 0 && (
        <table>
          <caption>{state === 'held' ? 'Records held for review, oldest first' : 'Records routed to a chart patient, oldest first'}</caption>
          <thead>
            <tr>
              <th scope="col">{state === 'held' ? 'Waiting' : 'Received'}</th>
              <th scope="col">Kind</th>
              <th scope="col">Sender</th>
              <th scope="col">Person as sent</th>
              <th scope="col">About</th>
              <th scope="col">{state === 'held' ? 'Reason' : 'Routed to'}</th>
              <th scope="col">
                <span class="visually-hidden">Open</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((h) => (
              <tr key={h.heldId}>
                <td>
                  <time dateTime={h.receivedAt}>{state === 'held' ? waited(h.receivedAt, now) : new Date(h.receivedAt).toLocaleString()}</time>
                </td>
                <td>{kindLabel(h.kind)}</td>
                <td>{h.sender}</td>
                <td>
                  {personName(h.person.name)}
                  {h.person.birthDate ? `, born ${h.person.birthDate}` : ''}
                </td>
                <td>{heldDescription(h)}</td>
                <td>{state === 'held' ? (HELD_REASONS[h.reason] ?? h.reason) : (h.routedTo ?? '—')}</td>
                <td>
                  <button
                    type="button"
                    onClick={() => onOpen(h.heldId)}
                    aria-label={`Open ${kindLabel(h.kind)} for ${personName(h.person.name)} from ${h.sender}`}
                  >
                    Open
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function ConfirmHeldRoute({ record, chart, onConfirm, onCancel }: { record: HeldDetail; chart: CandidateChart; onConfirm: () => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const what = record.kind === 'identity' ? "The partner's record of" : `The ${kindLabel(record.kind).toLowerCase()} sent for`;
  return (
    <dialog ref={dialog} aria-labelledby="confirm-held-title" aria-describedby="confirm-held-text" onCancel={onCancel}>
      <h2 id="confirm-held-title">Route this record?</h2>
      <p id="confirm-held-text">
        {what} <strong>{personName(record.person.name)}</strong> (born {record.person.birthDate ?? 'unknown'}) will be filed under{' '}
        <strong>{chartName(chart)}</strong> (born {chart.birthDate ?? 'unknown'}, MRN {chart.mrn}).
      </p>
      <div class="toolbar">
        <button type="button" class="primary" onClick={onConfirm}>
          Route to {chartName(chart)}
        </button>
        <button type="button" onClick={onCancel} autoFocus>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** One held record: the person as the sender described them, what was held, the chart search and the route. */
function HeldView({ api, heldId, canRoute, onBack }: { api: InboxApi; heldId: string; canRoute: boolean; onBack: () => void }) {
  const [record, setRecord] = useState<HeldDetail>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [confirming, setConfirming] = useState<CandidateChart>();
  const heading = useRef<HTMLHeadingElement>(null);
  const load = () =>
    api
      .held(heldId)
      .then(setRecord)
      .catch((e: Error) => setError(e.message));
  useEffect(() => void load(), [heldId]);
  useEffect(() => heading.current?.focus(), [record !== undefined]);
  const route = async (chart: CandidateChart) => {
    setConfirming(undefined);
    setError(undefined);
    try {
      await api.heldRoute(heldId, chart.patientId);
      setNotice(`Routed to ${chartName(chart)} (MRN ${chart.mrn}).`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && typeof e.body.routedTo === 'string') {
        setError(`Someone else routed this record first (to chart ${e.body.routedTo}).`);
      } else setError((e as Error).message);
    }
    await load();
  };
  const person = record?.person;
  const demographics = record?.demographics;
  return (
    <section aria-labelledby="held-record-title">
      <button type="button" onClick={onBack}>
        ← Back to held records
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {!record && !error && <p role="status">Loading…</p>}
      {record && person && (
        <>
          <h2 id="held-record-title" tabIndex={-1} ref={heading}>
            {kindLabel(record.kind)} from {record.sender}
          </h2>
          <p>
            {record.state === 'held' ? (
              <>Held — {HELD_REASONS[record.reason] ?? record.reason}.</>
            ) : (
              <>
                Routed to chart <strong>{record.routedTo}</strong>
                {record.routedBy ? ` by ${record.routedBy}` : ''}
                {record.routedAt ? (
                  <>
                    {' '}
                    on <time dateTime={record.routedAt}>{new Date(record.routedAt).toLocaleString()}</time>
                  </>
                ) : null}
                .
              </>
            )}{' '}
            Received <time dateTime={record.receivedAt}>{new Date(record.receivedAt).toLocaleString()}</time> (message {record.sourceMessageId}).
          </p>
          <div class="compare">
            <article class="card submitted" aria-labelledby="held-person-title">
              <h3 id="held-person-title">Person as the sender described them</h3>
              <dl>
                <dt>Name</dt>
                <dd>{personName(person.name)}</dd>
                <dt>Birth date</dt>
                <dd>{person.birthDate ?? '—'}</dd>
                <dt>Sex</dt>
                <dd>{person.sex ?? '—'}</dd>
                <dt>Identifiers</dt>
                <dd>{identifiersText(person)}</dd>
                {demographics?.address && (
                  <>
                    <dt>Address</dt>
                    <dd>
                      {[
                        demographics.address.line1,
                        demographics.address.line2,
                        demographics.address.city,
                        demographics.address.state,
                        demographics.address.postalCode,
                      ]
                        .filter(Boolean)
                        .join(', ')}
                    </dd>
                  </>
                )}
              </dl>
            </article>
            {record.note && (
              <article class="card" aria-labelledby="held-note-title">
                <h3 id="held-note-title">Document {record.description.documentNumber ?? ''}</h3>
                <dl>
                  <dt>Author</dt>
                  <dd>{personName(record.note.author.name)}</dd>
                  <dt>Written</dt>
                  <dd>
                    <time dateTime={record.note.createdAt}>{new Date(record.note.createdAt).toLocaleString()}</time>
                  </dd>
                </dl>
                <h4>Text</h4>
                <p class="note-text">{record.note.text}</p>
              </article>
            )}
            {record.resultIds && (
              <article class="card" aria-labelledby="held-results-title">
                <h3 id="held-results-title">Lab results</h3>
                <p>
                  {record.resultIds.length} result{record.resultIds.length === 1 ? '' : 's'}, kept encrypted; routing files them under the chart patient.
                </p>
              </article>
            )}
          </div>
          {canRoute && record.state === 'held' && (
            <FindPatient search={(query) => api.heldSearch(heldId, query)} onRoute={setConfirming} title="Find the chart patient" />
          )}
          {confirming && (
            <ConfirmHeldRoute record={record} chart={confirming} onConfirm={() => void route(confirming)} onCancel={() => setConfirming(undefined)} />
          )}
        </>
      )}
    </section>
  );
}

function App({ config }: { config: PageConfig }) {
  const [session, setSession] = useState<StaffSession>();
  const [booting, setBooting] = useState(true);
  const [error, setError] = useState<string>();
  const [open, setOpen] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [view, setView] = useState<'packets' | 'held'>('packets');
  const [openHeld, setOpenHeld] = useState<string>();
  useEffect(() => {
    completeSignIn(config)
      .then((s) => setSession(s))
      .catch((e: Error) => setError(e.message))
      .finally(() => setBooting(false));
  }, []);
  if (booting) return <p role="status">Loading…</p>;
  if (!session || session.expiresAt < Date.now())
    return <SignIn config={config} error={error ?? (session ? 'Your session has ended. Sign in again.' : undefined)} />;
  const api = inboxApi(new URL('.', location.href).toString(), () => session.idToken);
  const canRoute = session.groups.includes(REVIEWER_GROUP);
  return (
    <>
      <header>
        <p class="brand">Interop inbox</p>
        <p>
          Signed in as <strong>{session.displayName}</strong> ({session.username}, {canRoute ? 'reviewer' : 'read only'})
        </p>
        <button type="button" onClick={() => signOut(config, session)}>
          Sign out
        </button>
      </header>
      <nav aria-label="Inbox views" class="toolbar views">
        <button type="button" aria-current={view === 'packets' ? 'page' : undefined} onClick={() => setView('packets')}>
          Form packets
        </button>
        <button type="button" aria-current={view === 'held' ? 'page' : undefined} onClick={() => setView('held')}>
          Held from partners
        </button>
      </nav>
      <main id="main">
        <h1 class="visually-hidden">Interop inbox</h1>
        {view === 'held' ? (
          openHeld ? (
            <HeldView api={api} heldId={openHeld} canRoute={canRoute} onBack={() => setOpenHeld(undefined)} />
          ) : (
            <HeldQueue api={api} onOpen={setOpenHeld} />
          )
        ) : open ? (
          <PacketView
            api={api}
            packetId={open}
            canRoute={canRoute}
            onBack={() => setOpen(undefined)}
            onRouted={(message) => {
              setNotice(message);
              setOpen(undefined);
            }}
          />
        ) : (
          <Queue
            api={api}
            notice={notice}
            onOpen={(id) => {
              setNotice(undefined);
              setOpen(id);
            }}
          />
        )}
      </main>
    </>
  );
}

const configElement = document.getElementById('inbox-config');
const config = JSON.parse(configElement?.textContent ?? '{}') as PageConfig;
render(<App config={config} />, document.getElementById('app')!);
