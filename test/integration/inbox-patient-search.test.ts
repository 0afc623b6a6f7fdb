/**
 * POST /interopInbox/{packetId}/patientSearch (issue 20): a reviewer finds the chart patient by MRN
 * or by last name + birth date when none of the matcher's candidates is the patient, then routes
 * the packet there. Through the local stack: a patient written by the chart import (not the demo
 * load), reviewers and viewers signed in at the local OpenID provider, the audit trail.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '../../lib/aws/attribute-values';
import { dynamoDbClient } from '../../lib/aws/clients';
import { importChart } from '../../lib/chart/chart-import';
import { ChartStore } from '../../lib/chart/chart-store';
import { ChartPatientWriter } from '../../lib/forms/chart-patient-writer';
import { formsDependencies } from '../../lib/forms/forms-wiring';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';
import { signInStaff } from '../support/staff-sign-in';

let stack: LocalStack;
let reviewer: string;
let viewer: string;
beforeAll(async () => {
  stack = await startTestStack({ staffSignIn: true });
  reviewer = (await signInStaff(stack, 'demo-reviewer', 'demo-reviewer-password')).idToken;
  viewer = (await signInStaff(stack, 'demo-viewer', 'demo-viewer-password')).idToken;
});
afterAll(async () => {
  await stack?.close();
});

const IMPORTED = { patientId: 'search-pat-1', mrn: 'SRCH-7781', family: 'Okonkwo-Laurent', given: 'Adaeze', birthDate: '1988-11-02' };

type Chart = { patientId: string; role: string; mrn: string; name: { family: string; given?: string } };

async function search(packetId: string, body: unknown, token = reviewer) {
  return call(stack, 'POST', `/interopInbox/${packetId}/patientSearch`, {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function postPacket(patient: Record<string, string>): Promise<string> {
  const res = await call(stack, 'POST', '/receiveFormIntakeScope', {
    headers: { 'x-api-key': 'demo-forms-key', 'content-type': 'application/json' },
    body: JSON.stringify({
      payload: {
        sourceSystemId: 'demo-form-tool',
        formId: 'intake-1',
        formName: 'New patient intake',
        submissionId: `sub-search-${Date.now()}-${Math.random().toString(36).slice(2)}`,
        patient,
        answers: { q1: 'yes' },
      },
    }),
  });
  expect(res.status).toBe(202);
  return res.json<{ packetId: string }>().packetId;
}

const ids = (charts: Chart[]) => charts.map((c) => c.patientId).sort();

describe('chart search from an inbox packet', () => {
  let packetId: string;

  beforeAll(async () => {
    // the patient comes in through the chart import's writer, as `npm run import` writes it
    const forms = formsDependencies();
    const result = await importChart(new ChartPatientWriter(new ChartStore(dynamoDbClient(), stack.tables.chart), forms), {
      patients: [
        {
          patientId: IMPORTED.patientId,
          mrn: IMPORTED.mrn,
          assigningAuthority: 'SEARCH-HOSP',
          name: { family: IMPORTED.family, given: IMPORTED.given },
          birthDate: IMPORTED.birthDate,
          sex: 'F',
        },
      ],
    });
    expect(result.ok).toBe(true);
    // the form tool misspelt everything: the matcher finds nobody, the packet waits for a person
    packetId = await postPacket({ externalPatientId: 'ft-search-1', firstName: 'Ada', lastName: 'Okonkwo', dob: '1988-02-11' });
  });

  it('by MRN, any case and spacing: the imported patient, shown as the candidates are', async () => {
    const res = await search(packetId, { mrn: ` ${IMPORTED.mrn.toLowerCase()} ` });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('no-store');
    const body = res.json<{ charts: Chart[]; more: boolean; packetId: string }>();
    expect(body.packetId).toBe(packetId);
    expect(body.more).toBe(false);
    expect(body.charts).toEqual([
      expect.objectContaining({
        patientId: IMPORTED.patientId,
        role: 'search',
        mrn: IMPORTED.mrn,
        assigningAuthority: 'SEARCH-HOSP',
        birthDate: IMPORTED.birthDate,
        sex: 'F',
      }),
    ]);
    expect((await search(packetId, { mrn: 'SRCH-0000' })).json<{ charts: Chart[] }>().charts).toEqual([]);
  });

  it('by last name + birth date (accents, case and hyphens do not count); a first name narrows', async () => {
    const byName = await search(packetId, { lastName: 'okonkwo laurent', birthDate: IMPORTED.birthDate });
    expect(ids(byName.json<{ charts: Chart[] }>().charts)).toEqual([IMPORTED.patientId]);
    expect(
      ids((await search(packetId, { lastName: 'Okonkwo-Laurent', firstName: 'adaeze', birthDate: IMPORTED.birthDate })).json<{ charts: Chart[] }>().charts),
    ).toEqual([IMPORTED.patientId]);
    expect(
      (await search(packetId, { lastName: 'Okonkwo-Laurent', firstName: 'Bola', birthDate: IMPORTED.birthDate })).json<{ charts: Chart[] }>().charts,
    ).toEqual([]);
    expect((await search(packetId, { lastName: 'Okonkwo-Laurent', birthDate: '1988-11-03' })).json<{ charts: Chart[] }>().charts).toEqual([]);
    // the demo namesakes: both Robin Examples born 1975-06-30
    expect(ids((await search(packetId, { lastName: 'Example', birthDate: '1975-06-30' })).json<{ charts: Chart[] }>().charts)).toEqual([
      'demo-patient-3',
      'demo-patient-4',
    ]);
  });

  it('then routes there; the audit trail names the reviewer and every patient the search showed', async () => {
    expect((await search(packetId, { mrn: IMPORTED.mrn })).status).toBe(200);
    const routed = await call(stack, 'POST', `/interopInbox/${packetId}/route`, {
      headers: { authorization: `Bearer ${reviewer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ patientId: IMPORTED.patientId }),
    });
    expect(routed.status).toBe(200);
    expect(routed.json<{ routedTo: string }>().routedTo).toBe(IMPORTED.patientId);
    const audit = await dynamoDbClient().send(new ScanCommand({ TableName: stack.tables.audit }));
    const searches = (audit.Items ?? []).map((i) => unmarshall(i)).filter((r) => r.action === 'inbox.patient-search' && r.status === 200);
    expect(searches.some((r) => r.patientId === IMPORTED.patientId && r.staffUsername === 'demo-reviewer')).toBe(true);
    expect(searches.some((r) => r.patientId === 'demo-patient-4')).toBe(true);
    // no searched value in any audit record
    for (const r of searches) for (const v of [IMPORTED.mrn, 'Okonkwo', IMPORTED.birthDate, '1975-06-30']) expect(JSON.stringify(r)).not.toContain(v);
  });

  it('a viewer may not search (403); bad bodies are 400 naming the fields; an unknown packet is 404', async () => {
    const other = await postPacket({ externalPatientId: 'ft-search-2', firstName: 'Nobody', lastName: 'Known', dob: '1901-01-01' });
    expect((await search(other, { mrn: IMPORTED.mrn }, viewer)).status).toBe(403);
    for (const body of [
      {},
      { mrn: '' },
      { mrn: IMPORTED.mrn, lastName: 'X', birthDate: '1988-11-02' },
      { lastName: 'Okonkwo' },
      { lastName: 'Okonkwo', birthDate: '1988-02-30' },
      { lastName: '12', birthDate: '1988-11-02' },
      { mrn: 'x'.repeat(65) },
    ]) {
      const res = await search(other, body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(JSON.stringify(res.json())).not.toContain('Okonkwo');
    }
    expect((await search('fp_00000000000000000000000000000000', { mrn: IMPORTED.mrn })).status).toBe(404);
    expect((await search('not-a-packet', { mrn: IMPORTED.mrn })).status).toBe(404);
  });
});
