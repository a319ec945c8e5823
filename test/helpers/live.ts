import assert from 'node:assert/strict';
import { testSchemaName, withSchemaLock } from './database.js';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { formFields } from './oauth.js';

/**
 * Helpers for suites that talk to a real server process over loopback (issue 10): signing in
 * through the form, the OAuth code flow, and reading the server's database directly.
 */

export const LIVE_ROOT_TOKEN = 'bsp_live-root-token-0123456789abcdef';
export const LIVE_ROOT_PASSWORD = 'root-password-123';

/** Cookies from Set-Cookie headers merged into a jar (name → value). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      if (eq > 0) this.cookies.set((pair as string).slice(0, eq).trim(), (pair as string).slice(eq + 1));
    }
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** Signs in through `POST /users/sign_in` as a browser would; the jar then holds the session. */
export async function signIn(base: string, login: string, password: string, jar = new CookieJar()): Promise<CookieJar> {
  const page = await fetch(`${base}/users/sign_in`, { headers: { cookie: jar.header() } });
  jar.take(page);
  const fields = formFields(await page.text());
  const res = await fetch(`${base}/users/sign_in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ authenticity_token: fields.authenticity_token ?? '', 'user[login]': login, 'user[password]': password }),
  });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  jar.take(res);
  return jar;
}

export interface LiveClient {
  clientId: string;
  secret: string;
  redirectUri: string;
}

/** Registers a confidential application with root's token. */
export async function registerLiveApp(base: string, token: string, scopes = 'api read_user'): Promise<LiveClient> {
  const redirectUri = 'https://app.example/cb';
  const res = await fetch(`${base}/api/v4/applications`, {
    method: 'POST',
    headers: { 'private-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `app-${randomBytes(3).toString('hex')}`, redirect_uri: redirectUri, scopes, confidential: true }),
  });
  if (res.status !== 201) throw new Error(`register app: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { application_id: string; secret: string };
  return { clientId: body.application_id, secret: body.secret, redirectUri };
}

/** Consent page → approve → code → token endpoint, with PKCE; returns the token response. */
export async function codeFlow(
  base: string,
  jar: CookieJar,
  client: LiveClient,
  scope = 'api',
): Promise<{ access_token: string; refresh_token: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: 'code',
    scope,
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    // Through the consent page every time, even where the user's consent would be remembered.
    prompt: 'consent',
  });
  const page = await fetch(`${base}/oauth/authorize?${query}`, { headers: { cookie: jar.header() }, redirect: 'manual' });
  if (page.status !== 200) throw new Error(`consent page: ${page.status}`);
  jar.take(page);
  const fields = formFields(await page.text());
  const approved = await fetch(`${base}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, decision: 'approve' }),
  });
  const code = new URL(approved.headers.get('location') ?? 'x:/').searchParams.get('code');
  if (approved.status !== 303 || !code) throw new Error(`approve: ${approved.status}`);
  const token = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      client_secret: client.secret,
      code_verifier: verifier,
    }),
  });
  if (token.status !== 200) throw new Error(`token: ${token.status} ${await token.text()}`);
  return (await token.json()) as { access_token: string; refresh_token: string };
}

/** A database a live server uses: a fresh PostgreSQL schema, or SQLite in the data dir. */
export interface LiveDatabase {
  /** Environment for startServer (DATABASE_URL with the schema as search_path, when PostgreSQL). */
  env: Record<string, string>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function livePostgres(url: string): Promise<LiveDatabase> {
  const schema = testSchemaName();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.query(`set search_path to ${schema}`);
  const separator = url.includes('?') ? '&' : '?';
  return {
    env: { DATABASE_URL: `${url}${separator}options=-c%20search_path%3D${schema}` },
    query: async <T>(sql: string, params: unknown[] = []) => {
      // `?` placeholders, as SQLite writes them, become $1, $2…
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${(n += 1)}`);
      return (await admin.query(text, params)).rows as T[];
    },
    close: async () => {
      await admin.end();
      // Under the migrations' advisory lock, like every test schema drop (helpers/database.ts).
      await withSchemaLock(url, (client) => client.query(`drop schema ${schema} cascade`)).catch(() => undefined);
    },
  };
}

export function liveSqlite(dataDir: string): LiveDatabase {
  let db: Database.Database | null = null;
  const open = () => (db ??= new Database(path.join(dataDir, 'basalt.sqlite3'), { readonly: true, fileMustExist: true }));
  return {
    env: { DATA_DIR: dataDir },
    query: async <T>(sql: string, params: unknown[] = []) =>
      open()
        .prepare(sql)
        .all(...params) as T[],
    close: async () => {
      db?.close();
      db = null;
    },
  };
}

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/** JSON request with a token against a live server. */
export async function liveApi(
  base: string,
  method: string,
  url: string,
  token: string | null,
  body?: unknown,
): Promise<{ status: number; json: () => unknown; text: string }> {
  const res = await fetch(`${base}/api/v4${url}`, {
    method,
    headers: { ...(token ? { 'private-token': token } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

/**
 * A project (`path`, created by root) whose alerts are mailed (`send_email`), with an HTTP alert
 * integration: the path and key to post alerts to on a live server.
 */
export async function liveMailedAlerts(base: string, path: string): Promise<{ notifyPath: string; token: string }> {
  const project = await liveApi(base, 'POST', '/projects', LIVE_ROOT_TOKEN, { name: path, path });
  assert.equal(project.status, 201, project.text);
  const projectId = (project.json() as { id: number }).id;
  const put = await liveApi(base, 'PUT', `/projects/${projectId}/alert_management/settings`, LIVE_ROOT_TOKEN, { send_email: true });
  assert.equal(put.status, 200, put.text);
  const integration = await liveApi(base, 'POST', `/projects/${projectId}/alert_management/integrations`, LIVE_ROOT_TOKEN, {
    name: 'mail',
    type: 'http',
    active: true,
  });
  assert.equal(integration.status, 201, integration.text);
  const { url, token } = integration.json() as { url: string; token: string };
  return { notifyPath: new URL(url).pathname, token };
}
