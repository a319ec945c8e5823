import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { sendPage, type FieldErrors, fieldErrorsOf } from '../../web/index.js';
import { AccessTokensPage, TOKENS_PAGE, type AccessTokensPageProps, type TokenInput } from './access-tokens.pages.js';
import { tokenScopesFor, type CreatedToken, type TokensService } from './tokens.service.js';

/** A new token's expiry the form suggests, as the established product's form does. */
const SUGGESTED_DAYS = 30;
/** The list shows the active tokens; more than this many is beyond what a person manages by hand. */
const LIST_MAX = 200;

const TokenForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  name: Type.String({ maxLength: 255 }),
  expires_at: Type.Optional(Type.String({ maxLength: 32 })),
  scopes: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })),
});
const ActionForm = Type.Object({ authenticity_token: Type.Optional(Type.String({ maxLength: 256 })) });
const TokenParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];
const inputOf = (body: Record<string, unknown>): TokenInput => ({
  name: str(body.name),
  expiresAt: str(body.expires_at),
  scopes: list(body.scopes),
});

/**
 * `/-/user_settings/personal_access_tokens`: the signed-in user's own personal tokens through
 * the API's rules (tokens.service.ts: scopes, MAX_ACCESS_TOKEN_LIFETIME_DAYS). A new or
 * rotated secret is drawn into the answer to the POST that made it and nowhere else: not in
 * a cookie, a URL or the session.
 */
export function accessTokensPages(web: ApiApp, tokens: TokensService): void {
  const render = async (request: FastifyRequest, input: TokenInput, errors: FieldErrors, created?: AccessTokensPageProps['created']) => {
    const { user } = request.page.actor!;
    const { rows } = await tokens.list({ userId: user.id, kinds: ['personal'], state: 'active' }, LIST_MAX, 0);
    return (
      <AccessTokensPage
        page={request.page}
        tokens={rows}
        scopes={tokenScopesFor(user.isAdmin)}
        input={input}
        errors={errors}
        latestExpiry={tokens.latestExpiry()}
        created={created}
      />
    );
  };
  const blank = (): TokenInput => ({ name: '', expiresAt: tokens.suggestedExpiry(SUGGESTED_DAYS), scopes: [] });
  const form = (request: FastifyRequest, body: Record<string, unknown>, errors: FieldErrors) => render(request, inputOf(body), errors);
  const reveal = async (request: FastifyRequest, reply: FastifyReply, made: CreatedToken, rotated: boolean) =>
    sendPage(reply, await render(request, blank(), {}, { name: made.row.name, token: made.token, rotated }), rotated ? 200 : 201);
  const signedIn = { signIn: 'required' } as const;
  const action = { schema: { params: TokenParams, body: ActionForm }, config: { page: signedIn } };
  const idOf = (request: FastifyRequest) => (request.params as { id: number }).id;

  web.get(TOKENS_PAGE, { config: { page: signedIn } }, async (request, reply) => sendPage(reply, await render(request, blank(), {})));

  web.post(TOKENS_PAGE, { schema: { body: TokenForm }, config: { page: { ...signedIn, form } } }, async (request, reply) => {
    const input = inputOf(request.body);
    try {
      const made = await tokens.createOwn(request.page.actor!, { name: input.name, scopes: input.scopes, expires_at: input.expiresAt });
      return await reveal(request, reply, made, false);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return sendPage(reply, await render(request, input, fieldErrorsOf(error)), 400);
    }
  });

  web.post(`${TOKENS_PAGE}/:id/revoke`, action, async (request, reply) => {
    const row = await tokens.getOwnPersonal(request.page.actor!.user.id, idOf(request));
    await tokens.revoke(row, { by: request.page.actor });
    return reply.redirectWithFlash(TOKENS_PAGE, { kind: 'notice', text: `Token ${row.name} was revoked: it no longer works.` });
  });

  web.post(`${TOKENS_PAGE}/:id/rotate`, action, async (request, reply) => {
    const row = await tokens.getOwnPersonal(request.page.actor!.user.id, idOf(request));
    if (row.revoked === 1)
      return reply.redirectWithFlash(TOKENS_PAGE, { kind: 'error', text: `Token ${row.name} was revoked and cannot be rotated.` });
    return reveal(request, reply, await tokens.rotate(row, undefined, { by: request.page.actor }), true);
  });
}
