/**
 * The interop inbox page for clinic staff: sign in, the review queue, a packet beside its
 * candidates' charts, route with a confirmation naming both people. Nothing is kept in the URL or
 * in browser storage except the one-redirect PKCE state (auth.ts); tokens stay in memory.
 */
import { Fragment, render, type ComponentChildren } from 'preact';
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
import {
  ACTION_WORDS,
  STATE_WORDS,
  actorText,
  answerLabel,
  compareFields,
  differencesText,
  ruleText,
  type FieldComparison,
  type PersonFields,
} from './compare';

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
  no_relationship: 'Sender does not serve this patient',
};

const stateText = (state: string) => STATE_WORDS[state] ?? state;

/** A value shown in a card: a date or an identifier (one token, no `@`) never wraps at its hyphens. */
function Value({ text }: { text: string }) {
  const at = text.indexOf('@');
  // an email may wrap before its @ (and, longer than a line, anywhere), never elsewhere mid-word
  if (at > 0 && !/\s/.test(text))
    return (
      <>
        {text.slice(0, at)}
        <wbr />
        {text.slice(at)}
      </>
    );
  return /^[^\s@]+$/.test(text) && text.length <= 40 ? <span class="token">{text}</span> : <>{text}</>;
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
const chartPerson = (c: CandidateChart): PersonFields => ({
  firstName: c.name.given,
  middleName: c.name.middle,
  lastName: c.name.family,
  birthDate: c.birthDate,
  sex: c.sex,
  email: c.email,
  phone: c.phone,
  address: c.address,
  mrn: c.mrn,
});
const packetPerson = (p: PacketDetail): PersonFields => ({
  firstName: p.patient.firstName,
  lastName: p.patient.lastName,
  birthDate: p.patient.dob,
  email: p.patient.email,
});

/** A focusable element to give focus back to once a dialog or a view closes. */
const activeControl = () => (document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : undefined);

/** The disagreements of a comparison as a list, or a sentence saying there are none. */
function Differences({ rows, id }: { rows: FieldComparison[]; id?: string }) {
  const differing = rows.filter((r) => r.differs);
  if (differing.length === 0) return <p id={id}>No differences in the fields both sides have.</p>;
  return (
    <div id={id}>
      <p class="differs-summary">
        <span aria-hidden="true">≠ </span>
        {differing.length} difference{differing.length === 1 ? '' : 's'}:
      </p>
      <ul>
        {differing.map((r) => (
          <li key={r.key}>
            {r.label}: sent <Value text={r.sent} />, chart <Value text={r.chart} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function SignIn({ config, error }: { config: PageConfig; error?: string }) {
  return (
    <main id="main">
      <h1>Interop inbox</h1>
      <p>Form packets that could not be filed to a patient automatically wait here for clinic staff. Sign in with your staff account.</p>
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

/**
 * A table that scrolls inside its own focusable region when the screen is narrower than it (320-640
 * px): the page never scrolls sideways, and dates and ids never break to fit.
 */
function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/**
 * Where focus goes when a list is shown again: the Open button of the item the reviewer came back
 * from (else the list's heading), or the heading after a page change (the paging button may be gone).
 */
function useListFocus(items: unknown[] | undefined, returnTo: string | undefined, skip: boolean) {
  const heading = useRef<HTMLHeadingElement>(null);
  const paged = useRef(false);
  useEffect(() => {
    if (!items || skip) return;
    if (paged.current) {
      paged.current = false;
      heading.current?.focus();
    } else if (returnTo) {
      (document.querySelector<HTMLElement>(`[data-open="${CSS.escape(returnTo)}"]`) ?? heading.current)?.focus();
    }
  }, [items]);
  return { heading, markPaged: () => (paged.current = true) };
}

function Queue({ api, onOpen, notice, returnTo }: { api: InboxApi; onOpen: (id: string) => void; notice?: string; returnTo?: string }) {
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
  // after routing, focus lands on the outcome (the packet's controls are gone)
  const noticeRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => noticeRef.current?.focus(), [notice]);
  const { heading, markPaged } = useListFocus(items, returnTo, Boolean(notice));
  const page = (next: Array<string | undefined>) => {
    markPaged();
    setPages(next);
  };
  const now = Date.now();
  return (
    <section aria-labelledby="queue-title">
      <h2 id="queue-title" tabIndex={-1} ref={heading}>
        Waiting for review
      </h2>
      {notice && (
        <p class="notice" role="status" tabIndex={-1} ref={noticeRef}>
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
          <button type="button" onClick={() => page([undefined])}>
            Newest
          </button>
        )}
        {next && (
          <button type="button" onClick={() => page([...pages, next])}>
            Older packets
          </button>
        )}
      </div>
      {!items && !error && <p role="status">Loading…</p>}
      {items && items.length === 0 && <p role="status">Nothing is waiting for review.</p>}
      {items && items.length > 0 && (
        <TableScroll label="Packets waiting for review">
          <table>
            <caption>Packets waiting for review, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Waiting</th>
                <th scope="col">Form</th>
                <th scope="col">Source</th>
                <th scope="col">Reason</th>
                <th scope="col">Possible charts</th>
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
                  <td>
                    <Value text={p.formId} />
                  </td>
                  <td>
                    <Value text={p.sourceSystemId} />
                  </td>
                  <td>{REASONS[p.reason ?? ''] ?? p.reason ?? '—'}</td>
                  <td>{p.candidateCount}</td>
                  <td>
                    <button
                      type="button"
                      data-open={p.packetId}
                      onClick={() => onOpen(p.packetId)}
                      aria-label={`Open packet ${p.formId} received ${waited(p.receivedAt, now)} ago`}
                    >
                      Open
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

/**
 * The route confirmation: names the person as sent and the chart patient, and lists every field they
 * disagree on. Escape or Cancel closes it; the caller gives focus back to the control that opened it.
 */
function ConfirmRoute({
  title,
  what,
  sent,
  chart,
  onConfirm,
  onCancel,
}: {
  title: string;
  /** "The packet sent for" / "The document sent for" */
  what: string;
  sent: PersonFields;
  chart: CandidateChart;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const rows = compareFields(sent, chartPerson(chart));
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" aria-describedby="confirm-text confirm-differences" onCancel={onCancel}>
      <h2 id="confirm-title">{title}</h2>
      <p id="confirm-text">
        {what} <strong>{fullName(sent.firstName, sent.lastName ?? '') || 'a person whose name was not sent'}</strong> (born{' '}
        <Value text={sent.birthDate ?? 'unknown'} />) will be filed in the chart of <strong>{chartName(chart)}</strong> (born{' '}
        <Value text={chart.birthDate ?? 'unknown'} />, MRN <Value text={chart.mrn} />
        ).
      </p>
      <Differences rows={rows} id="confirm-differences" />
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

const ROLE_WORDS: Record<CandidateChart['role'], string> = {
  candidate: 'possible match',
  requested: 'named by the sender',
  search: 'chart search result',
  routed: 'filed here',
};

/**
 * A chart patient beside what was sent: every field in the same order as the sent card, each
 * disagreement marked with a sign and in words; the matcher's reasons in words, its points in a details view.
 */
function ChartCard({
  chart,
  sent,
  reasons,
  onRoute,
  routeDisabledReason,
}: {
  chart: CandidateChart;
  sent?: PersonFields;
  reasons: string[];
  onRoute?: (chart: CandidateChart) => void;
  /** a reviewer sees the Route button disabled, with this explanation, when the record can no longer be routed */
  routeDisabledReason?: string;
}) {
  const id = `chart-${chart.role}-${chart.patientId}`;
  const rows = compareFields(sent ?? {}, chartPerson(chart));
  const differing = differencesText(rows);
  const rules = reasons.map(ruleText);
  return (
    <article class="card" aria-labelledby={id}>
      <h3 id={id}>
        {chartName(chart)} <span class="tag">{ROLE_WORDS[chart.role]}</span>
      </h3>
      {sent && (
        <p class={differing ? 'differs-summary' : 'agrees-summary'}>
          {differing ? (
            <>
              <span aria-hidden="true">≠ </span>Differs from what was sent in {differing}.
            </>
          ) : (
            'Agrees with what was sent on every field both have.'
          )}
        </p>
      )}
      <dl>
        {rows.map((r) => (
          <Fragment key={r.key}>
            <dt>{r.label}</dt>
            <dd class={r.differs ? 'differs' : undefined}>
              {r.key === 'mrn' ? (
                <>
                  <Value text={chart.mrn} /> ({chart.assigningAuthority})
                </>
              ) : (
                <Value text={r.chart} />
              )}
              {r.differs && (
                <span class="differs-note">
                  <span aria-hidden="true">≠ </span>Differs: sent <Value text={r.sent} />
                </span>
              )}
            </dd>
          </Fragment>
        ))}
      </dl>
      {rules.length > 0 && (
        <>
          <h4>Why it was proposed</h4>
          <ul>
            {rules
              .filter((r) => !r.words.startsWith('Lead over'))
              .map((r, i) => (
                <li key={i}>{r.words}</li>
              ))}
          </ul>
          <details>
            <summary>Matching details</summary>
            <p>Score {chart.score ?? '—'} (points each rule added or took away):</p>
            <ul>
              {rules.map((r, i) => (
                <li key={i}>
                  {r.words}
                  {r.points !== undefined ? `: ${r.points} points` : ''}
                </li>
              ))}
            </ul>
          </details>
        </>
      )}
      {onRoute && (
        <button type="button" class="primary" onClick={() => onRoute(chart)}>
          Route to {chartName(chart)} (MRN <Value text={chart.mrn} />)
        </button>
      )}
      {!onRoute && routeDisabledReason && (
        <>
          <button type="button" class="primary" disabled aria-describedby={`${id}-disabled`}>
            Route to {chartName(chart)} (MRN <Value text={chart.mrn} />)
          </button>
          <p id={`${id}-disabled`} class="tag">
            {routeDisabledReason}
          </p>
        </>
      )}
    </article>
  );
}

/** The card of what was sent, with the same fields in the same order as the chart cards. */
function SentCard({
  id,
  title,
  person,
  extra,
  children,
}: {
  id: string;
  title: string;
  person: PersonFields;
  extra?: Array<[string, string]>;
  children?: ComponentChildren;
}) {
  const rows = compareFields(person, {});
  return (
    <article class="card submitted" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      <dl>
        {rows.map((r) => (
          <Fragment key={r.key}>
            <dt>{r.label}</dt>
            <dd>
              <Value text={r.sent} />
            </dd>
          </Fragment>
        ))}
        {(extra ?? []).map(([label, value]) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd>
              <Value text={value} />
            </dd>
          </Fragment>
        ))}
      </dl>
      {children}
    </article>
  );
}

type ChartSearch = (query: PatientSearchQuery) => Promise<{ charts: CandidateChart[]; more: boolean }>;

/** Search the chart by MRN, or by last name + birth date, when no candidate is the patient (packets and held records). */
function FindPatient({
  search: searchChart,
  sent,
  onRoute,
  title = 'Find another patient',
}: {
  search: ChartSearch;
  /** what was sent, for the hits to be compared with */
  sent: PersonFields;
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
            <ChartCard key={chart.patientId} chart={chart} sent={sent} reasons={[]} onRoute={onRoute} />
          ))}
        </div>
      )}
    </section>
  );
}

type Confirming = { chart: CandidateChart; trigger?: HTMLElement };

/** Gives focus back to the control that opened a dialog once it is closed (Escape, Cancel). */
function useReturnFocus(confirming: Confirming | undefined) {
  const trigger = useRef<HTMLElement | undefined>(undefined);
  useEffect(() => {
    if (confirming) trigger.current = confirming.trigger;
    else if (trigger.current?.isConnected) {
      trigger.current.focus();
      trigger.current = undefined;
    }
  }, [confirming]);
  return trigger;
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
  const [lostRace, setLostRace] = useState(false);
  const [confirming, setConfirming] = useState<Confirming>();
  const heading = useRef<HTMLHeadingElement>(null);
  const alert = useRef<HTMLParagraphElement>(null);
  const returnFocus = useReturnFocus(confirming);
  const load = () =>
    Promise.all([api.packet(packetId), api.candidates(packetId)]).then(([p, c]) => {
      setPacket(p);
      setCharts(c.charts);
    });
  useEffect(() => {
    load().catch((e: Error) => setError(e.message));
  }, [packetId]);
  useEffect(() => heading.current?.focus(), [packet !== undefined]);
  useEffect(() => {
    if (lostRace || error) alert.current?.focus();
  }, [lostRace, error]);
  const route = async (chart: CandidateChart) => {
    returnFocus.current = undefined; // focus goes to the outcome, not back to the button
    setConfirming(undefined);
    try {
      await api.route(packetId, chart.patientId);
      onRouted(`The packet was routed to ${chartName(chart)} (MRN ${chart.mrn}).`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        // someone else was first: show the packet as it is now, filed in their chosen chart
        await load().catch((reload: Error) => setError(reload.message));
        setLostRace(true);
      } else setError((e as Error).message);
    }
  };
  const open = (chart: CandidateChart) => setConfirming({ chart, trigger: activeControl() });
  const awaiting = packet && (packet.state === 'pending_review' || packet.state === 'pending_match');
  const reasonsOf = (patientId: string) => packet?.candidates.find((c) => c.patientId === patientId)?.reasons ?? [];
  const filedIn = packet?.patientId ? charts?.find((c) => c.patientId === packet.patientId) : undefined;
  const filedBy = packet?.history.filter((h) => h.patientId === packet.patientId && h.state === packet.state).at(-1);
  const filedText = packet?.patientId
    ? `${filedIn ? `${chartName(filedIn)} (MRN ${filedIn.mrn})` : 'a chart patient this page cannot show'}${filedBy ? `, by ${actorText(filedBy.actor, filedBy.staffUsername, filedBy.action)}` : ''}`
    : undefined;
  const sent = packet ? packetPerson(packet) : undefined;
  return (
    <section aria-labelledby="packet-title">
      <button type="button" onClick={onBack}>
        ← Back to the queue
      </button>
      {(error || lostRace) && (
        <p class="error" role="alert" tabIndex={-1} ref={alert}>
          {lostRace
            ? `Someone else routed this packet first: it is now in the chart of ${filedText ?? 'another patient'}. Your choice was not applied.`
            : error}
        </p>
      )}
      {!packet && !error && <p role="status">Loading…</p>}
      {packet && sent && (
        <>
          <h2 id="packet-title" tabIndex={-1} ref={heading}>
            {packet.formName ?? packet.formId} from {packet.sourceSystemId}
          </h2>
          <p>
            <strong>{stateText(packet.state)}</strong>
            {awaiting && packet.reason ? ` — ${REASONS[packet.reason] ?? packet.reason}` : ''}
            {!awaiting && filedText ? `: in the chart of ${filedText}` : ''}. Received{' '}
            <time dateTime={packet.receivedAt}>{new Date(packet.receivedAt).toLocaleString()}</time>.
          </p>
          <div class="compare">
            <SentCard id="submitted-title" title="Submitted" person={sent} extra={[["Form's patient id", packet.patient.externalPatientId ?? 'not sent']]}>
              <h4>Answers</h4>
              <dl>
                {Object.entries(packet.answers).map(([k, v]) => (
                  <Fragment key={k}>
                    <dt>{answerLabel(k)}</dt>
                    <dd>{typeof v === 'string' ? v : Array.isArray(v) ? v.join(', ') : String(v)}</dd>
                  </Fragment>
                ))}
              </dl>
            </SentCard>
            {(charts ?? []).map((chart) => (
              <ChartCard
                key={`${chart.role}-${chart.patientId}`}
                chart={chart}
                sent={sent}
                reasons={reasonsOf(chart.patientId)}
                onRoute={canRoute && awaiting ? open : undefined}
                routeDisabledReason={canRoute && !awaiting ? 'This packet is already filed; it cannot be routed again.' : undefined}
              />
            ))}
            {charts && charts.length === 0 && <p>No chart patient was found for this packet.</p>}
          </div>
          {canRoute && awaiting && <FindPatient search={(query) => api.search(packetId, query)} sent={sent} onRoute={open} />}
          <h3>History</h3>
          <TableScroll label="History">
            <table>
              <caption class="visually-hidden">What happened to this packet</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">By</th>
                </tr>
              </thead>
              <tbody>
                {packet.history.map((h, i) => (
                  <tr key={i}>
                    <td>
                      <time dateTime={h.at}>{new Date(h.at).toLocaleString()}</time>
                    </td>
                    <td>
                      {ACTION_WORDS[h.action] ?? h.action}
                      {h.reason ? ` (${REASONS[h.reason] ?? h.reason})` : ''}
                    </td>
                    <td>{actorText(h.actor, h.staffUsername, h.action)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          {confirming && (
            <ConfirmRoute
              title="Route this packet?"
              what="The packet sent for"
              sent={sent}
              chart={confirming.chart}
              onConfirm={() => void route(confirming.chart)}
              onCancel={() => setConfirming(undefined)}
            />
          )}
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
function HeldQueue({ api, onOpen, returnTo }: { api: InboxApi; onOpen: (id: string) => void; returnTo?: string }) {
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
  const { heading, markPaged } = useListFocus(items, returnTo, false);
  const page = (next: Array<string | undefined>) => {
    markPaged();
    setPages(next);
  };
  const show = (s: 'held' | 'routed') => {
    setState(s);
    setPages([undefined]);
  };
  const now = Date.now();
  return (
    <section aria-labelledby="held-title">
      <h2 id="held-title" tabIndex={-1} ref={heading}>
        Held from partners
      </h2>
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
          <button type="button" onClick={() => page([undefined])}>
            First page
          </button>
        )}
        {next && (
          <button type="button" onClick={() => page([...pages, next])}>
            Next page
          </button>
        )}
      </div>
      {!items && !error && <p role="status">Loading…</p>}
      {items && items.length === 0 && <p role="status">{state === 'held' ? 'Nothing is held for review.' : 'Nothing has been routed yet.'}</p>}
      {items && items.length > 0 && (
        <TableScroll label={state === 'held' ? 'Records held for review' : 'Records routed to a chart patient'}>
          <table>
            <caption>{state === 'held' ? 'Records held for review, oldest first' : 'Records routed to a chart patient, oldest first'}</caption>
            <thead>
              <tr>
                <th scope="col">{state === 'held' ? 'Waiting' : 'Received'}</th>
                <th scope="col">Kind</th>
                <th scope="col">Sender</th>
                <th scope="col">Person as sent</th>
                <th scope="col">About</th>
                <th scope="col">{state === 'held' ? 'Reason' : 'Routed on'}</th>
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
                  <td>
                    <Value text={h.sender} />
                  </td>
                  <td>
                    {personName(h.person.name)}
                    {h.person.birthDate ? (
                      <>
                        , born <Value text={h.person.birthDate} />
                      </>
                    ) : (
                      ''
                    )}
                  </td>
                  <td>{heldDescription(h)}</td>
                  <td>
                    {state === 'held' ? (
                      (HELD_REASONS[h.reason] ?? h.reason)
                    ) : h.routedAt ? (
                      // the list reads no chart: the record itself names the patient it went to
                      <time dateTime={h.routedAt}>{new Date(h.routedAt).toLocaleString()}</time>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>
                    <button
                      type="button"
                      data-open={h.heldId}
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
        </TableScroll>
      )}
    </section>
  );
}

/** One held record: the person as the sender described them, what was held, the chart search and the route. */
function HeldView({ api, heldId, canRoute, onBack }: { api: InboxApi; heldId: string; canRoute: boolean; onBack: () => void }) {
  const [record, setRecord] = useState<HeldDetail>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [confirming, setConfirming] = useState<Confirming>();
  const heading = useRef<HTMLHeadingElement>(null);
  const outcome = useRef<HTMLParagraphElement>(null);
  const returnFocus = useReturnFocus(confirming);
  const load = () =>
    api
      .held(heldId)
      .then(setRecord)
      .catch((e: Error) => setError(e.message));
  useEffect(() => void load(), [heldId]);
  useEffect(() => heading.current?.focus(), [record !== undefined]);
  useEffect(() => {
    if (notice || error) outcome.current?.focus();
  }, [notice, error]);
  const route = async (chart: CandidateChart) => {
    returnFocus.current = undefined;
    setConfirming(undefined);
    setError(undefined);
    try {
      await api.heldRoute(heldId, chart.patientId);
      setNotice(`Routed to ${chartName(chart)} (MRN ${chart.mrn}).`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && typeof e.body.routedTo === 'string') {
        setError('Someone else routed this record first; it now shows where it went. Your choice was not applied.');
      } else setError((e as Error).message);
    }
    await load();
  };
  const open = (chart: CandidateChart) => setConfirming({ chart, trigger: activeControl() });
  const person = record?.person;
  const demographics = record?.demographics;
  const sent: PersonFields | undefined = person && {
    firstName: [person.name?.given, person.name?.middle].filter(Boolean).join(' ') || undefined,
    lastName: person.name?.family,
    birthDate: person.birthDate,
    sex: person.sex,
    address: demographics?.address,
  };
  const routed = record?.routedChart;
  const routedName = routed
    ? `${fullName([routed.name.given, routed.name.middle].filter(Boolean).join(' ') || undefined, routed.name.family)} (MRN ${routed.mrn})`
    : 'a patient no longer in the chart';
  return (
    <section aria-labelledby="held-record-title">
      <button type="button" onClick={onBack}>
        ← Back to held records
      </button>
      {(error || notice) && (
        <p class={error ? 'error' : 'notice'} role={error ? 'alert' : 'status'} tabIndex={-1} ref={outcome}>
          {error ?? notice}
        </p>
      )}
      {!record && !error && <p role="status">Loading…</p>}
      {record && person && sent && (
        <>
          <h2 id="held-record-title" tabIndex={-1} ref={heading}>
            {kindLabel(record.kind)} from {record.sender}
          </h2>
          <p>
            {record.state === 'held' ? (
              <>Waiting for review — {HELD_REASONS[record.reason] ?? record.reason}.</>
            ) : (
              <>
                Routed to <strong>{routedName}</strong>
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
            <SentCard
              id="held-person-title"
              title="Person as the sender described them"
              person={sent}
              extra={[["Sender's identifiers", identifiersText(person)]]}
            />
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
            <FindPatient search={(query) => api.heldSearch(heldId, query)} sent={sent} onRoute={open} title="Find the chart patient" />
          )}
          {confirming && (
            <ConfirmRoute
              title="Route this record?"
              what={record.kind === 'identity' ? "The partner's record of" : `The ${kindLabel(record.kind).toLowerCase()} sent for`}
              sent={sent}
              chart={confirming.chart}
              onConfirm={() => void route(confirming.chart)}
              onCancel={() => setConfirming(undefined)}
            />
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
  /** the packet or held record the reviewer came back from: its Open button gets focus again */
  const [returnTo, setReturnTo] = useState<string>();
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
            <HeldView
              api={api}
              heldId={openHeld}
              canRoute={canRoute}
              onBack={() => {
                setReturnTo(openHeld);
                setOpenHeld(undefined);
              }}
            />
          ) : (
            <HeldQueue api={api} onOpen={setOpenHeld} returnTo={returnTo} />
          )
        ) : open ? (
          <PacketView
            api={api}
            packetId={open}
            canRoute={canRoute}
            onBack={() => {
              setReturnTo(open);
              setOpen(undefined);
            }}
            onRouted={(message) => {
              setNotice(message);
              setReturnTo(undefined);
              setOpen(undefined);
            }}
          />
        ) : (
          <Queue
            api={api}
            notice={notice}
            returnTo={returnTo}
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
