/**
 * Signs a demo staff member in to the local OpenID provider the way the inbox page does
 * (authorization code + PKCE), with plain HTTP requests and a cookie jar: for API-level tests.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Env } from '../../lib/config/service';
import type { LocalStack } from '../../lib/local/stack';

class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response): void {
    for (const raw of response.headers.getSetCookie()) {
      const [pair] = raw.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i).trim(), pair!.slice(i + 1));
    }
  }
  header(): string {
    return [...this.cookies.entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export interface StaffTokens {
  idToken: string;
}

export async function signInStaff(stack: LocalStack, username: string, password: string): Promise<StaffTokens> {
  const env = stack.env;
  const jar = new CookieJar();
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(8).toString('hex');
  const redirectUri = `${stack.urls.api}/inbox`;
  const authorize = new URL(env[Env.staffAuthorizeUrl]!);
  authorize.search = new URLSearchParams({
    client_id: env[Env.staffClientId]!,
    response_type: 'code',
    scope: env[Env.staffScopes]!,
    redirect_uri: redirectUri,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();

  const follow = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: jar.header() } });
    jar.store(response);
    return response;
  };
  let response = await follow(authorize.toString());
  let location = response.headers.get('location');
  if (!location) throw new Error(`authorize answered ${response.status}`);
  const interaction = new URL(location, authorize).toString();
  await follow(interaction);
  response = await follow(`${interaction}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password }).toString(),
  });
  location = response.headers.get('location');
  if (!location) throw new Error(`sign-in refused (${response.status})`);
  // back to the authorization endpoint, which redirects to the page with the code
  for (let hops = 0; hops < 5 && location && !location.startsWith(redirectUri); hops++) {
    response = await follow(new URL(location, authorize).toString());
    location = response.headers.get('location');
  }
  if (!location?.startsWith(redirectUri)) throw new Error('no authorization code came back');
  const back = new URL(location);
  if (back.searchParams.get('state') !== state) throw new Error('state mismatch');
  const code = back.searchParams.get('code')!;
  const token = await fetch(env[Env.staffTokenUrl]!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: env[Env.staffClientId]!,
      code_verifier: verifier,
    }).toString(),
  });
  if (token.status !== 200) throw new Error(`token endpoint answered ${token.status}`);
  const tokens = (await token.json()) as { id_token: string };
  return { idToken: tokens.id_token };
}
