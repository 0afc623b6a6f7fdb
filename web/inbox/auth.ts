/**
 * Staff sign-in for the inbox page: OpenID Connect authorization code flow with PKCE against the
 * staff user pool (Cognito on a stage, the local provider on this machine). Tokens live in memory
 * only; the PKCE verifier and state wait in sessionStorage for the one redirect (neither is PHI
 * nor a token) and are removed when the code is exchanged.
 */
export interface PageConfig {
  clientId: string;
  authorizeUrl: string;
  tokenUrl: string;
  logoutUrl?: string;
  /** e.g. `openid profile` (Cognito) */
  scope: string;
}

export interface StaffSession {
  idToken: string;
  username: string;
  displayName: string;
  groups: string[];
  expiresAt: number;
}

export const REVIEWER_GROUP = 'interop-reviewers';
const PENDING_KEY = 'interop-inbox.sign-in';

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

function randomString(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

export function redirectUri(): string {
  return `${location.origin}${location.pathname}`;
}

export async function beginSignIn(config: PageConfig): Promise<void> {
  const verifier = randomString();
  const state = randomString();
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state }));
  const url = new URL(config.authorizeUrl);
  url.search = new URLSearchParams({
    client_id: config.clientId,
    response_type: 'code',
    scope: config.scope,
    redirect_uri: redirectUri(),
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

function decodePayload(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1] ?? '';
  const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
}

export function sessionFromIdToken(idToken: string): StaffSession {
  const claims = decodePayload(idToken);
  const groups = Array.isArray(claims['cognito:groups']) ? (claims['cognito:groups'] as unknown[]).filter((g): g is string => typeof g === 'string') : [];
  const username = [claims['cognito:username'], claims.preferred_username, claims.sub].find((v): v is string => typeof v === 'string') ?? 'staff';
  const displayName = typeof claims.name === 'string' ? claims.name : username;
  const exp = typeof claims.exp === 'number' ? claims.exp * 1000 : Date.now() + 3600_000;
  return { idToken, username, displayName, groups, expiresAt: exp };
}

/** When the page was opened by the sign-in redirect: exchange the code, clean the address bar. */
export async function completeSignIn(config: PageConfig): Promise<StaffSession | undefined> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  const state = params.get('state');
  const error = params.get('error');
  if (!code && !error) return undefined;
  const pending = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  history.replaceState(null, '', redirectUri());
  if (error) throw new Error('Sign-in was cancelled or refused.');
  const expected = pending ? (JSON.parse(pending) as { verifier: string; state: string }) : undefined;
  if (!expected || expected.state !== state) throw new Error('This sign-in response does not belong to this page. Sign in again.');
  const response = await fetch(config.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: redirectUri(),
      client_id: config.clientId,
      code_verifier: expected.verifier,
    }).toString(),
  });
  if (!response.ok) throw new Error('The sign-in could not be completed. Sign in again.');
  const tokens = (await response.json()) as { id_token?: string };
  if (!tokens.id_token) throw new Error('The sign-in returned no ID token.');
  return sessionFromIdToken(tokens.id_token);
}

export function signOut(config: PageConfig, session: StaffSession | undefined): void {
  if (!config.logoutUrl || !session) {
    location.assign(redirectUri());
    return;
  }
  const url = new URL(config.logoutUrl);
  // Cognito's /logout takes client_id + logout_uri; OpenID providers take id_token_hint + post_logout_redirect_uri
  url.search = url.pathname.endsWith('/logout')
    ? new URLSearchParams({ client_id: config.clientId, logout_uri: redirectUri() }).toString()
    : new URLSearchParams({ id_token_hint: session.idToken, post_logout_redirect_uri: redirectUri(), client_id: config.clientId }).toString();
  location.assign(url.toString());
}
