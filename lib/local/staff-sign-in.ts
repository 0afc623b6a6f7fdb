/**
 * Starts the local OpenID provider (staff-identity-provider.ts) in a child process and returns the
 * environment the handlers and the inbox page read: the same variable names a deployed stage sets
 * from its Cognito user pool (lib/config/service.ts, Env.staff*).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Env } from '../config/service';
import { STAFF_CLIENT_ID } from './staff-identity-provider';

export interface StaffSignIn {
  issuer: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

export async function startStaffSignIn(options: { host: string; port: number; apiUrl: string }): Promise<StaffSignIn> {
  const root = path.resolve(__dirname, '..', '..');
  const entry = path.join(__dirname, 'staff-identity-provider.ts');
  const redirectUri = `${options.apiUrl}/inbox`;
  const child = spawn(process.execPath, ['--import', 'tsx', entry, '--host', options.host, '--port', String(options.port), '--redirect-uri', redirectUri], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  // oidc-provider warns about Node 20 and its in-memory store on every start: expected here
  createInterface({ input: child.stderr }).on('line', (line) => {
    if (!line.startsWith('oidc-provider WARNING')) process.stderr.write(`staff-sign-in: ${line}\n`);
  });
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the local staff sign-in provider did not start in time')), START_TIMEOUT_MS);
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve((JSON.parse(line) as { issuer: string }).issuer);
      } catch {
        reject(new Error('the local staff sign-in provider printed no issuer'));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the local staff sign-in provider exited (${code})`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    issuer,
    env: {
      [Env.staffIssuer]: issuer,
      [Env.staffClientId]: STAFF_CLIENT_ID,
      [Env.staffJwksUri]: `${issuer}/jwks`,
      [Env.staffAuthorizeUrl]: `${issuer}/auth`,
      [Env.staffTokenUrl]: `${issuer}/token`,
      [Env.staffLogoutUrl]: `${issuer}/session/end`,
      [Env.staffScopes]: 'openid profile groups',
    },
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
