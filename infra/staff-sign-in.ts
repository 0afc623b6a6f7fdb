/**
 * Staff sign-in for the interop inbox page: an Amazon Cognito user pool of the clinic's own staff
 * (no self sign-up, MFA required, group `interop-reviewers` for those who may route packets), its
 * hosted sign-in (authorization code + PKCE, public client, no secret), and the settings the
 * authorizer (to verify ID tokens) and the page (to sign in) read, under the same variable names
 * the local stack sets from its OpenID provider (lib/config/service.ts, Env.staff*).
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { Env } from '../lib/config/service';
import { REVIEWER_GROUP } from '../lib/keys/staff-token';
import type { StageConfig } from './config';

export interface StaffSignInProps {
  config: StageConfig;
  /** the inbox page's address (the sign-in redirect and sign-out return) */
  pageUrl: string;
}

export class StaffSignIn extends Construct {
  readonly userPool: cognito.UserPool;
  readonly client: cognito.UserPoolClient;
  readonly domain: cognito.UserPoolDomain;
  /** environment for the authorizer and the page function */
  readonly environment: Record<string, string>;

  constructor(scope: Construct, id: string, props: StaffSignInProps) {
    super(scope, id);
    const { config } = props;
    this.userPool = new cognito.UserPool(this, 'Staff', {
      userPoolName: `${config.prefix}-staff`,
      selfSignUpEnabled: false,
      signInAliases: { username: true, email: true },
      mfa: cognito.Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      passwordPolicy: {
        minLength: 14,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      featurePlan: cognito.FeaturePlan.PLUS,
      standardThreatProtectionMode: cognito.StandardThreatProtectionMode.FULL_FUNCTION,
      deletionProtection: config.retainData,
      removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    new cognito.CfnUserPoolGroup(this, 'Reviewers', {
      userPoolId: this.userPool.userPoolId,
      groupName: REVIEWER_GROUP,
      description: 'Clinic staff who may route interop inbox packets to a chart',
    });
    this.domain = this.userPool.addDomain('HostedSignIn', { cognitoDomain: { domainPrefix: staffDomainPrefix(config, Stack.of(this).account) } });
    this.client = this.userPool.addClient('InboxPage', {
      userPoolClientName: `${config.prefix}-inbox-page`,
      generateSecret: false,
      authFlows: {},
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [cognito.OAuthScope.OPENID, cognito.OAuthScope.PROFILE],
        callbackUrls: [props.pageUrl],
        logoutUrls: [props.pageUrl],
      },
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.hours(8),
      enableTokenRevocation: true,
    });
    const issuer = this.userPool.userPoolProviderUrl;
    const base = this.domain.baseUrl();
    this.environment = {
      [Env.staffIssuer]: issuer,
      [Env.staffClientId]: this.client.userPoolClientId,
      [Env.staffJwksUri]: `${issuer}/.well-known/jwks.json`,
      [Env.staffAuthorizeUrl]: `${base}/oauth2/authorize`,
      [Env.staffTokenUrl]: `${base}/oauth2/token`,
      [Env.staffLogoutUrl]: `${base}/logout`,
      [Env.staffScopes]: 'openid profile',
    };
  }
}

/**
 * The hosted sign-in's domain prefix. Cognito prefixes are unique per region across all AWS
 * accounts, so the default is `interop-<stage>-staff-<account id>`. The account id is digits only
 * and the stage is validated lower-case, so nothing is lower-cased here: an account-agnostic
 * synthesis (`npm run synth`, no account) keeps `${AWS::AccountId}` as a token that CloudFormation
 * resolves at deploy time (lower-casing the token's placeholder broke it), and a synthesis with an
 * account renders the same string as before. `-c staffDomainPrefix=...` replaces it (lower-case
 * letters, digits and hyphens, 1-63 characters, no "aws", "amazon" or "cognito").
 */
export function staffDomainPrefix(config: Pick<StageConfig, 'prefix' | 'staffDomainPrefix'>, account: string): string {
  return config.staffDomainPrefix ?? `${config.prefix}-staff-${account}`;
}
