/**
 * The inbox page's comparison and wording (web/inbox/compare.ts): what a reviewer is told differs,
 * and that no internal code reaches the screen.
 */
import { actorText, answerLabel, compareFields, differencesText, ruleText, sexText, STATE_WORDS } from '../../web/inbox/compare';

describe('compareFields', () => {
  const chart = {
    firstName: 'Robin',
    lastName: 'Example',
    birthDate: '1985-02-14',
    sex: 'U',
    email: 'Robin.Example@Example.org',
    phone: '+1 555-0104',
    address: { line1: '4 Side Road', city: 'Springfield' },
    mrn: 'DEMO-000004',
  };

  it('flags a birth-date mismatch and nothing the packet did not send', () => {
    const rows = compareFields({ firstName: 'Robin', lastName: 'Example', birthDate: '1985-12-04', email: 'robin.example@example.org' }, chart);
    expect(rows.map((r) => r.key)).toEqual(['name', 'birthDate', 'sex', 'email', 'phone', 'address', 'mrn']);
    expect(rows.filter((r) => r.differs)).toEqual([{ key: 'birthDate', label: 'Birth date', sent: '1985-12-04', chart: '1985-02-14', differs: true }]);
    expect(rows.find((r) => r.key === 'phone')).toMatchObject({ sent: 'not sent', chart: '+1 555-0104', differs: false });
    expect(rows.find((r) => r.key === 'sex')).toMatchObject({ chart: 'Unknown' });
    expect(differencesText(rows)).toBe('birth date');
  });

  it('names, emails and phones compare as people write them', () => {
    const same = compareFields(
      { firstName: 'róbin', lastName: 'EXAMPLE', email: ' robin.example@example.org', phone: '(555) 0104' },
      { ...chart, phone: '+1 (555) 0104' },
    );
    expect(same.filter((r) => r.differs)).toEqual([]);
    const other = compareFields({ firstName: 'Sam', lastName: 'Example', email: 'sam@example.org', phone: '555 0199' }, chart);
    expect(differencesText(other)).toBe('name, email and phone');
  });

  it('an unknown sex on either side is no disagreement', () => {
    expect(compareFields({ sex: 'F' }, chart).find((r) => r.key === 'sex')?.differs).toBe(false);
    expect(compareFields({ sex: 'F' }, { sex: 'M' }).find((r) => r.key === 'sex')).toMatchObject({ sent: 'Female', chart: 'Male', differs: true });
    expect(differencesText(compareFields({}, chart))).toBeUndefined();
  });
});

describe('plain words', () => {
  it('matcher rules read as words, their points kept apart', () => {
    expect(ruleText('dob_exact:+14.6')).toEqual({ words: 'Birth date is the same', points: '+14.6' });
    expect(ruleText('first_name_edit1:+3.1')).toEqual({ words: 'First name differs by one letter', points: '+3.1' });
    expect(ruleText('margin_over_runner_up:+0.0').words).toBe('Lead over the next possible chart');
    expect(ruleText('shares_last_name_and_dob_with:1')).toEqual({ words: 'Shares last name and birth date with 1 other chart patient' });
    for (const rule of ['last_name_exact:+9.0', 'email_mismatch:-12.2', 'external_id_mrn:+20.0', 'names_swapped:-1.0']) {
      expect(ruleText(rule).words).not.toMatch(/_|\d/);
    }
  });

  it('states, actors, sex codes and answer keys', () => {
    expect(Object.values(STATE_WORDS).join(' ')).not.toMatch(/_/);
    expect(actorText('api-key')).toBe('Sending system');
    expect(actorText('api-key', undefined, 'routed_manually')).toBe('Reviewing system');
    expect(actorText('matcher')).toBe('Automatic matching');
    expect(actorText('staff', 'demo-reviewer')).toBe('demo-reviewer');
    expect(sexText('U')).toBe('Unknown');
    expect(answerLabel('reasonForVisit')).toBe('Reason for visit');
    expect(answerLabel('allergies_known')).toBe('Allergies known');
    expect(answerLabel('Reason for visit')).toBe('Reason for visit');
  });
});
