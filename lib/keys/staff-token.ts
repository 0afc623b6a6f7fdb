/**
 * Staff identity: an OpenID Connect ID token from the staff user pool (Amazon Cognito in the cloud,
 * the local OpenID provider of lib/local on this machine), verified against the issuer's JWKS.
 * Only ID tokens issued to the inbox page's client (audience) by the configured issuer are accepted;
 * signature, expiry and issuer are checked by aws-jwt-verify. Group membership comes from the
 * `cognito:groups` claim (the local provider issues the same claim).
 */
import { ContainerCache } from '../aws/container-cache';
import { JwtVerifier } from 'aws-jwt-verify';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import type { Fetcher } from 'aws-jwt-verify/https';
import { Env } from '../config/service';

/** Members may route packets; every other signed-in staff member may only read the inbox. */
export const REVIEWER_GROUP = 'interop-reviewers';
export const GROUPS_CLAIM = 'cognito:groups';

export interface StaffIdentity {
  /** the user pool's stable subject id (safe to log and audit: not a name) */
  subject: string;
  /** sign-in name (e.g. demo-reviewer), for the audit trail */
  username: string;
  groups: string[];
}

export interface StaffTokenConfig {
  issuer: string;
  clientId: string;
  jwksUri: string;
}

export class StaffTokenInvalidError extends Error {
  override readonly name = 'StaffTokenInvalidError';
}

export class StaffSignInNotConfiguredError extends Error {
  override readonly name = 'StaffSignInNotConfiguredError';
}

const JWKS_TIMEOUT_MS = 3000;
const MAX_JWKS_BYTES = 64 * 1024;

/** JWKS over http(s) with the runtime's fetch: the local provider listens on plain http (loopback). */
class JwksFetcher implements Fetcher {
  async fetch(uri: string): Promise<ArrayBuffer> {
    const url = new URL(uri);
    const local = url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost');
    if (url.protocol !== 'https:' && !local) throw new StaffSignInNotConfiguredError('the JWKS URI must use https');
    const response = await fetch(url, { signal: AbortSignal.timeout(JWKS_TIMEOUT_MS), redirect: 'error' });
    if (!response.ok) throw new Error(`JWKS fetch answered ${response.status}`);
    const body = await response.arrayBuffer();
    if (body.byteLength > MAX_JWKS_BYTES) throw new Error('JWKS document too large');
    return body;
  }
}

export function staffTokenConfigFromEnv(env: NodeJS.ProcessEnv = process.env): StaffTokenConfig | undefined {
  const issuer = env[Env.staffIssuer];
  const clientId = env[Env.staffClientId];
  if (!issuer || !clientId) return undefined;
  return { issuer, clientId, jwksUri: env[Env.staffJwksUri] || `${issuer.replace(/\/$/, '')}/.well-known/jwks.json` };
}

export interface StaffTokenVerifier {
  verify(token: string): Promise<StaffIdentity>;
}

/** One verifier per configuration (JWKS cached for the container's life, refetched on an unknown kid). */
export function staffTokenVerifier(config: StaffTokenConfig): StaffTokenVerifier {
  const verifier = JwtVerifier.create(
    { issuer: config.issuer, audience: config.clientId, jwksUri: config.jwksUri },
    { jwksCache: new SimpleJwksCache({ fetcher: new JwksFetcher() }) },
  );
  return {
    async verify(token: string): Promise<StaffIdentity> {
      let payload: Record<string, unknown>;
      try {
        payload = (await verifier.verify(token)) as Record<string, unknown>;
      } catch (error) {
        throw new StaffTokenInvalidError('the bearer token is not a valid staff ID token', { cause: error });
      }
      if (payload.token_use !== undefined && payload.token_use !== 'id') throw new StaffTokenInvalidError('the bearer token is not an ID token');
      const subject = typeof payload.sub === 'string' ? payload.sub : '';
      if (!subject) throw new StaffTokenInvalidError('the bearer token names no subject');
      const username = [payload['cognito:username'], payload.preferred_username, payload.username].find((v): v is string => typeof v === 'string') ?? subject;
      const rawGroups = payload[GROUPS_CLAIM];
      const groups = Array.isArray(rawGroups) ? rawGroups.filter((g): g is string => typeof g === 'string') : [];
      return { subject, username, groups };
    },
  };
}

const verifiers = new ContainerCache<StaffTokenVerifier>();
/** The verifier for the environment's configuration, built once per container. */
export function staffTokenVerifierFromEnv(): StaffTokenVerifier | undefined {
  const config = staffTokenConfigFromEnv();
  if (!config) return undefined;
  return verifiers.get([config.issuer, config.clientId, config.jwksUri], () => staffTokenVerifier(config));
}
