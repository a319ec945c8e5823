import { createHash, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.js';
import type { TestUser } from './factories.js';

export const REDIRECT = 'https://app.example/cb';

export interface TestClient {
  id: number;
  clientId: string;
  secret: string;
  redirectUri: string;
}

/** An application registered through the admin API (root's token). */
export async function registerApp(
  t: TestApp,
  options: { confidential?: boolean; scopes?: string; redirectUri?: string; name?: string } = {},
): Promise<TestClient> {
  const redirectUri = options.redirectUri ?? REDIRECT;
  const res = await t.api('POST', '/applications', {
    body: {
      name: options.name ?? 'Test app',
      redirect_uri: redirectUri,
      scopes: options.scopes ?? 'api read_user openid profile email',
      confidential: options.confidential ?? true,
    },
  });
  if (res.statusCode !== 201) throw new Error(`registerApp: ${res.statusCode} ${res.body}`);
  const body = res.json();
  return { id: body.id, clientId: body.application_id, secret: body.secret, redirectUri: redirectUri.split('\n')[0] as string };
}

/** A signed-in browser: the session cookie the identity module sets on sign-in. */
export async function sessionCookie(t: TestApp, user: TestUser): Promise<string> {
  const session = await t.app.modules.identity.sessions.create(user.user.id, { ip: null, userAgent: null });
  return `_service_session=${session.secret}`;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** `name=value` pairs of the Set-Cookie headers, joined for a Cookie header. */
export function cookiesOf(res: LightMyRequestResponse): string[] {
  const raw = res.headers['set-cookie'];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.map((c) => c.split(';')[0] as string);
}

/** The hidden fields of the consent form. */
export function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    fields[match[1] as string] = (match[2] as string)
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>');
  }
  return fields;
}

export const form = (values: Record<string, string | undefined>): string =>
  new URLSearchParams(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined)).toString();

export function authorizeQuery(client: TestClient, extra: Record<string, string | undefined> = {}): string {
  return form({ client_id: client.clientId, redirect_uri: client.redirectUri, response_type: 'code', state: 'st-123', ...extra });
}

export interface Consent {
  cookie: string;
  fields: Record<string, string>;
  page: LightMyRequestResponse;
}

/**
 * GET /oauth/authorize as a signed-in user: the consent page and what its form would send.
 * `prompt=consent` is added (unless the query names a prompt), so a consent the user gave
 * before is asked again rather than remembered.
 */
export async function openConsent(t: TestApp, cookie: string, query: string): Promise<Consent> {
  const asked = new URLSearchParams(query).has('prompt') ? query : `${query}&prompt=consent`;
  const page = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${asked}`, headers: { cookie } });
  if (page.statusCode !== 200) throw new Error(`consent: ${page.statusCode} ${page.headers.location ?? page.body.slice(0, 300)}`);
  return { cookie: [cookie, ...cookiesOf(page)].join('; '), fields: formFields(page.body), page };
}

export function postConsent(t: TestApp, consent: Consent, decision: 'approve' | 'deny', override: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/authorize',
    headers: { cookie: consent.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: form({ ...consent.fields, decision, ...override }),
  });
}

/** Signs in, consents and returns the code from the redirect. */
export async function obtainCode(
  t: TestApp,
  cookie: string,
  client: TestClient,
  extra: Record<string, string | undefined> = {},
): Promise<{ code: string; location: URL }> {
  const consent = await openConsent(t, cookie, authorizeQuery(client, extra));
  const res = await postConsent(t, consent, 'approve');
  if (res.statusCode !== 303) throw new Error(`approve: ${res.statusCode} ${res.body.slice(0, 300)}`);
  const location = new URL(res.headers.location as string);
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`no code in ${location.toString()}`);
  return { code, location };
}

export function tokenRequest(t: TestApp, values: Record<string, string | undefined>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: form(values),
  });
}

export function basic(client: TestClient, secret = client.secret): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** Authorization code + PKCE for a client: the token response body. */
export async function issueTokens(
  t: TestApp,
  cookie: string,
  client: TestClient,
  extra: Record<string, string | undefined> = {},
): Promise<{ access_token: string; refresh_token: string; [key: string]: unknown }> {
  const { verifier, challenge } = pkcePair();
  const { code } = await obtainCode(t, cookie, client, { code_challenge: challenge, code_challenge_method: 'S256', ...extra });
  const res = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirectUri,
    client_id: client.clientId,
    client_secret: client.secret,
    code_verifier: verifier,
  });
  if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`);
  return res.json();
}

export function tokenInfo(t: TestApp, accessToken: string) {
  return t.app.inject({ method: 'GET', url: '/oauth/token/info', headers: { authorization: `Bearer ${accessToken}` } });
}
