/**
 * The local stack's staff sign-in: a real OpenID Connect provider (the maintained `oidc-provider`
 * package) on loopback, standing in for the Amazon Cognito user pool of a deployed stage. It runs
 * in a child process of the local stack (oidc-provider is an ES module with its own web framework;
 * a process of its own keeps it out of the handlers' module graph and out of every Lambda bundle).
 *
 *   node --import tsx lib/local/staff-identity-provider.ts --host 127.0.0.1 --port 0 --redirect-uri URL
 *
 * prints one JSON line `{"issuer": "..."}` when it listens. One public client, `interop-inbox`
 * (authorization code + PKCE, no secret), demo users from staff-directory.ts, ID tokens carrying
 * `cognito:groups` as Cognito's do, RS256 keys made at start (tokens do not survive a restart).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { GROUPS_CLAIM } from '../keys/staff-token';
import { StaffDirectory } from './staff-directory';

export const STAFF_CLIENT_ID = 'interop-inbox';

// the parts of oidc-provider's API used here
interface InteractionDetails {
  uid: string;
  prompt: { name: string };
  params: Record<string, unknown>;
  session?: { accountId?: string };
}
interface GrantLike {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}
interface ProviderLike {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => void;
  interactionDetails(req: http.IncomingMessage, res: http.ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  Grant: { new (props: { accountId: string; clientId: string }): GrantLike; find(id: string): Promise<GrantLike | undefined> };
}
interface OidcContext {
  oidc: {
    result?: { consent?: { grantId?: string } };
    session: { accountId?: string; grantIdFor(clientId: string): string | undefined };
    client: { clientId: string; redirectUris: string[] };
    provider: ProviderLike;
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}label{display:block;margin-top:1rem;font-weight:600}input{font:inherit;width:100%;padding:.5rem;border:1px solid #555;border-radius:4px;box-sizing:border-box}button{font:inherit;margin-top:1.5rem;padding:.5rem 1.25rem;background:#0b5394;color:#fff;border:0;border-radius:4px;cursor:pointer}button:focus,input:focus{outline:3px solid #f9a825;outline-offset:2px}.error{color:#a4161a;font-weight:600}</style>
</head><body><main>${body}</main></body></html>`;
}

/** The sign-in form; after a refused attempt it keeps the user name typed (never the password) and focuses the password. */
function loginForm(uid: string, error?: string, username = ''): string {
  const again = error !== undefined && username !== '';
  return page(
    'Sign in: clinic staff',
    `<h1>Clinic staff sign-in</h1><p>Interop inbox (local demo directory)</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/interaction/${encodeURIComponent(uid)}/login" autocomplete="off">
<label for="username">Username</label><input id="username" name="username" required${again ? '' : ' autofocus'} value="${escapeHtml(username)}">
<label for="password">Password</label><input id="password" name="password" type="password" required${again ? ' autofocus' : ''}>
<button type="submit">Sign in</button></form>`,
  );
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16 * 1024) throw new Error('form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startStaffIdentityProvider(options: {
  host: string;
  port: number;
  redirectUri: string;
}): Promise<{ issuer: string; close(): Promise<void> }> {
  const directory = new StaffDirectory();
  // set once the provider exists (it needs the issuer, which needs the listening port); 503 until then
  // eslint-disable-next-line prefer-const
  let handler: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | undefined;
  const server = http.createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const issuer = `http://${options.host}:${(server.address() as AddressInfo).port}`;
  const redirectOrigin = new URL(options.redirectUri).origin;

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };
  // typed by the interfaces above (the package ships no type declarations)
  const moduleName = 'oidc-provider';
  const { default: Provider } = (await import(moduleName)) as { default: new (issuer: string, config: Record<string, unknown>) => ProviderLike };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: STAFF_CLIENT_ID,
        client_name: 'Interop inbox',
        token_endpoint_auth_method: 'none',
        redirect_uris: [options.redirectUri],
        post_logout_redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: ['openid', 'profile', 'groups'],
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], groups: [GROUPS_CLAIM] },
    // claims in the ID token itself (the inbox sends the ID token, as with Cognito)
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true, logoutSource } },
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 60, IdToken: 3600, AccessToken: 3600, Interaction: 600, Session: 8 * 3600, Grant: 8 * 3600 },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    clientBasedCORS: (_ctx: unknown, origin: string) => origin === redirectOrigin,
    // the inbox is the clinic's own application: its scopes are granted without a consent screen
    loadExistingGrant: async (ctx: OidcContext) => {
      const existing = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (existing) return ctx.oidc.provider.Grant.find(existing);
      if (!ctx.oidc.session.accountId) return undefined;
      const grant = new ctx.oidc.provider.Grant({ accountId: ctx.oidc.session.accountId, clientId: ctx.oidc.client.clientId });
      grant.addOIDCScope('openid profile groups');
      await grant.save();
      return grant;
    },
    findAccount: async (_ctx: unknown, subject: string) => {
      const member = directory.bySubject(subject);
      if (!member) return undefined;
      return {
        accountId: subject,
        claims: async () => ({ sub: subject, name: member.displayName, preferred_username: member.username, [GROUPS_CLAIM]: member.groups }),
      };
    },
  });
  const oidc = provider.callback();

  handler = (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const login = /^\/interaction\/([\w-]+)\/login$/.exec(url.pathname);
    const show = /^\/interaction\/([\w-]+)$/.exec(url.pathname);
    if (req.method === 'GET' && show) {
      provider
        .interactionDetails(req, res)
        .then((details) => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
          res.end(loginForm(details.uid));
        })
        .catch(() => res.writeHead(400, { 'content-type': 'text/plain' }).end('This sign-in attempt has expired. Start again from the inbox.'));
      return;
    }
    if (req.method === 'POST' && login) {
      (async () => {
        const details = await provider.interactionDetails(req, res);
        const form = await readForm(req);
        const member = directory.authenticate(form.get('username') ?? '', form.get('password') ?? '');
        if (!member) {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
          res.end(loginForm(details.uid, 'Unknown username or wrong password.', (form.get('username') ?? '').slice(0, 128)));
          return;
        }
        await provider.interactionFinished(req, res, { login: { accountId: member.subject } }, { mergeWithLastSubmission: false });
      })().catch(() => {
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' }).end('This sign-in attempt has expired. Start again from the inbox.');
      });
      return;
    }
    oidc(req, res);
  };

  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The sign-out confirmation (rendered by oidc-provider with its own form; ours only words it). */
async function logoutSource(ctx: { body: string }, form: string): Promise<void> {
  ctx.body = page(
    'Sign out',
    `<h1>Sign out of the clinic staff directory?</h1>${form.replace('</form>', '<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button></form>')}`,
  );
}

if (require.main === module) {
  const { values } = parseArgs({
    options: { host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '0' }, 'redirect-uri': { type: 'string' } },
  });
  if (!values['redirect-uri']) {
    process.stderr.write('--redirect-uri is required\n');
    process.exit(2);
  }
  startStaffIdentityProvider({ host: values.host!, port: Number(values.port), redirectUri: values['redirect-uri'] })
    .then(({ issuer, close }) => {
      process.stdout.write(`${JSON.stringify({ issuer })}\n`);
      const stop = () => void close().then(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      // the parent's end is ours too
      process.stdin.on('end', stop);
      process.stdin.resume();
    })
    .catch((error: Error) => {
      process.stderr.write(`staff identity provider failed: ${error.name}: ${error.message}\n`);
      process.exit(1);
    });
}
