import type { FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { sendPage, toSignIn } from '../../web/index.js';
import { AUTHORIZE_PARAMS, type AuthorizeService } from './authorize.service.js';
import { ConsentPage, OAuthErrorPage } from './oauth.pages.js';
import { readParams, type OAuthParams } from './params.rules.js';

export interface AuthorizeRouteDeps {
  authorize: AuthorizeService;
}

// Signing in is optional at the door: `prompt=none` must answer the client, not the sign-in page.
const PAGE = { page: { signIn: 'optional' } } as const;
// A page holding an authorization request must not leak it in Referer (RFC 9700 §4.2.4).
const onSend = async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
  reply.header('referrer-policy', 'no-referrer');
  return payload;
};

function errorPage(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return sendPage(reply, <OAuthErrorPage title="Authorization failed" error={error} description={description} />, status);
}

/** Parameters of the request, or the error page when they are malformed (duplicates, types). */
function paramsOr(reply: FastifyReply, source: unknown): OAuthParams | null {
  try {
    return readParams(source);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    errorPage(reply, 400, error.error, error.description);
    return null;
  }
}

const field = (body: Record<string, unknown>, name: string): string | undefined =>
  typeof body[name] === 'string' ? body[name] : undefined;

/**
 * `GET /oauth/authorize` (consent page) and `POST /oauth/authorize` (the user's answer),
 * RFC 6749 §4.1.1–4.1.2, on the page layer: it resolves the session and checks the consent
 * form's CSRF token; the OAuth answers (error pages, redirects to the client) are these routes'.
 */
export function authorizePages(web: ApiApp, { authorize }: AuthorizeRouteDeps): void {
  web.get('/oauth/authorize', { config: PAGE, onSend }, async (request, reply) => {
    const params = paramsOr(reply, request.query);
    if (!params) return reply;
    const pre = await authorize.preAuthorize(params);
    if (pre.kind === 'fatal') return errorPage(reply, 400, pre.error.error, pre.error.description);
    if (pre.kind === 'redirect') return reply.redirect(pre.location, 302);
    const { request: req } = pre;
    const silent = req.prompt.includes('none');
    const actor = request.page.actor;
    if (silent && !actor) return reply.redirect(authorize.interactionRequired(req, 'login_required'), 302);
    if (!actor) return toSignIn(request, reply);
    const { interactionId, issuedAt } = authorize.newInteraction();
    if (!req.prompt.includes('consent') && (await authorize.consentRemembered(req, actor.user.id))) {
      const location = await authorize.approve(req, actor.user.id, interactionId, null);
      if (location) return reply.redirect(location, 302);
    }
    if (silent) return reply.redirect(authorize.interactionRequired(req, 'consent_required'), 302);
    const fields: Record<string, string> = {};
    for (const name of AUTHORIZE_PARAMS) {
      const value = params.get(name);
      if (value !== undefined) fields[name] = value;
    }
    fields.interaction_id = interactionId;
    fields.issued_at = String(issuedAt);
    fields.consent_ticket = authorize.consentTicket(actor.credential.id, actor.user.id, params, interactionId, issuedAt);
    return sendPage(
      reply,
      <ConsentPage
        page={request.page}
        application={req.application}
        scopes={req.scopes}
        redirectHost={new URL(req.redirectUri).host || req.redirectUri}
        fields={fields}
      />,
    );
  });

  web.post('/oauth/authorize', { config: PAGE, onSend, bodyLimit: 64 * 1024 }, async (request: FastifyRequest, reply) => {
    const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
    const actor = request.page.actor;
    // RFC 6749 §10.12 / checklist B8: a consent answer needs the session, the CSRF token (the
    // page layer refused the form without it) and the ticket bound to this user, session and
    // request; anything less grants nothing.
    if (!actor) return errorPage(reply, 403, 'access_denied', 'Your session has ended. Sign in and start again from the application.');
    const params = paramsOr(reply, Object.fromEntries(AUTHORIZE_PARAMS.filter((n) => n in body).map((n) => [n, body[n]])));
    if (!params) return reply;
    const interactionId = field(body, 'interaction_id') ?? '';
    const issuedAt = Number(field(body, 'issued_at'));
    const ticket = field(body, 'consent_ticket') ?? '';
    if (!authorize.consentValid(actor.credential.id, actor.user.id, params, interactionId, issuedAt, ticket)) {
      return errorPage(
        reply,
        403,
        'invalid_request',
        'This authorization form does not belong to your session. Start again from the application.',
      );
    }
    const pre = await authorize.preAuthorize(params);
    if (pre.kind === 'fatal') return errorPage(reply, 400, pre.error.error, pre.error.description);
    // RFC 9700 §4.12: 303 after a POST, so the browser does not resend the form to the client.
    if (pre.kind === 'redirect') return reply.redirect(pre.location, 303);
    if (field(body, 'decision') !== 'approve') return reply.redirect(authorize.deny(pre.request), 303);
    const location = await authorize.approve(pre.request, actor.user.id, interactionId, null);
    if (!location) return errorPage(reply, 403, 'invalid_request', 'This authorization request was already answered.');
    return reply.redirect(location, 303);
  });
}
