// panva's oidc-provider configured like Basalt for the comparison of issue 4 item 10:
// confidential client, PKCE, refresh-token rotation, opaque access tokens, no id_token.
// Tokens are minted directly through its models (no browser interaction), then the
// refresh grant and introspection (its token-info) are loaded over HTTP.
// Usage: tsx bench/servers/oidc-provider.ts <refresh|introspect>; prints {"port", "request"}.
import http from 'node:http';
import Provider from 'oidc-provider';
import { REFRESH_CHAINS, REFRESH_TOKENS } from '../scenarios.js';

const mode = process.argv[2] ?? 'refresh';
const server = http.createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;
const issuer = `http://127.0.0.1:${port}`;
const CLIENT = { id: 'bench', secret: 'bench-client-secret-0123456789' };

/**
 * An unbounded in-memory adapter: the built-in development adapter is an LRU of 1000
 * entries, which under load evicts live grants and fails refreshes. Memory is the most
 * favourable storage oidc-provider can have, so the comparison errs in its favour.
 */
class MapAdapter {
  private static readonly stores = new Map<string, Map<string, Record<string, unknown>>>();
  private readonly store: Map<string, Record<string, unknown>>;
  constructor(name: string) {
    this.store = MapAdapter.stores.get(name) ?? new Map();
    MapAdapter.stores.set(name, this.store);
  }
  async upsert(id: string, payload: Record<string, unknown>): Promise<void> {
    this.store.set(id, payload);
  }
  async find(id: string): Promise<Record<string, unknown> | undefined> {
    return this.store.get(id);
  }
  async findByUserCode(code: string): Promise<Record<string, unknown> | undefined> {
    return [...this.store.values()].find((p) => p.userCode === code);
  }
  async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
    return [...this.store.values()].find((p) => p.uid === uid);
  }
  async consume(id: string): Promise<void> {
    const payload = this.store.get(id);
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string): Promise<void> {
    this.store.delete(id);
  }
  async revokeByGrantId(grantId: string): Promise<void> {
    for (const [name, store] of MapAdapter.stores) {
      void name;
      for (const [id, payload] of store) if (payload.grantId === grantId) store.delete(id);
    }
  }
}

const provider = new Provider(issuer, {
  adapter: MapAdapter,
  clients: [
    {
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      redirect_uris: ['https://app.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  scopes: ['api'],
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: () => true,
  features: { introspection: { enabled: true }, devInteractions: { enabled: false } },
  ttl: { AccessToken: 7200, RefreshToken: 14 * 86400, Grant: 14 * 86400, Session: 14 * 86400 },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
});
provider.on('server_error', (_ctx, error) => process.stderr.write(`oidc-provider: ${String(error)}\n`));
const handle = provider.callback();
server.on('request', (request, response) => void handle(request, response));

const found = await provider.Client.find(CLIENT.id);
if (!found) throw new Error('client missing');
const client = found;

async function mintPair(): Promise<{ access: string; refresh: string }> {
  const grant = new provider.Grant({ accountId: 'user-1', clientId: CLIENT.id });
  grant.addOIDCScope('api');
  const grantId = await grant.save();
  const now = Math.floor(Date.now() / 1000);
  const refresh = await new provider.RefreshToken({
    accountId: 'user-1',
    client,
    grantId,
    scope: 'api',
    gty: 'authorization_code',
    authTime: now,
    iiat: now,
    rotations: 0,
  }).save();
  const access = await new provider.AccessToken({ accountId: 'user-1', client, grantId, scope: 'api', gty: 'authorization_code' }).save();
  return { access, refresh };
}

const pairs = [];
for (let i = 0; i < REFRESH_TOKENS; i += 1) pairs.push(await mintPair());
const request =
  mode === 'refresh'
    ? {
        method: 'POST',
        path: '/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        factory: {
          name: 'refresh-chain',
          args: {
            clientId: CLIENT.id,
            secret: CLIENT.secret,
            redirectUri: 'https://app.example/cb',
            tokens: pairs.map((p) => p.refresh),
            perRound: REFRESH_CHAINS,
          },
        },
      }
    : {
        method: 'POST',
        path: '/token/introspection',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: pairs[0]?.access ?? '', client_id: CLIENT.id, client_secret: CLIENT.secret }).toString(),
      };
process.stdout.write(`${JSON.stringify({ port, request })}\n`);
process.on('SIGTERM', () => process.exit(0));
