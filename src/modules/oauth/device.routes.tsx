import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.js';
import type { Actor } from '../../infra/auth/index.js';
import type { RateLimiter } from '../../infra/http/index.js';
import { sendPage } from '../../web/layout.js';
import type { PageAuth } from '../identity/index.js';
import { formatUserCode, normalizeUserCode, type DeviceService } from './device.service.js';
import { DeviceConfirmPage, DeviceDonePage, DeviceEntryPage, OAuthErrorPage, pageLike } from './oauth.pages.js';

export interface DeviceRouteDeps {
  device: DeviceService;
  pageAuth: PageAuth;
  limiter: RateLimiter;
  config: Config;
}

const NONE = { policy: { auth: 'none' } } as const;
const LIMIT_NAME = 'user_code';

const bodyOf = (request: FastifyRequest): Record<string, unknown> =>
  (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value.slice(0, 32) : '');

/**
 * The verification page of RFC 8628 §3.3 (`/oauth/device`). Wrong codes count against the
 * `user_code` rate limit per user and per IP (RFC 8628 §5.1, checklist B6), so the ~34.5 bits
 * of a user code cannot be searched.
 */
export function deviceRoutes(app: FastifyInstance, { device, pageAuth, limiter, config }: DeviceRouteDeps): void {
  const keys = (request: FastifyRequest, actor: Actor) => [`user:${actor.user.id}`, `ip:${request.ip}`];
  const limit = config.rateLimits.user_code;

  // The limiter's refusal carries Retry-After (the window's end) and the RateLimit-* headers (DESIGN §5).
  const tooMany = (reply: FastifyReply, refusal: { headers: Record<string, string> }) =>
    sendPage(
      reply.headers(refusal.headers),
      <OAuthErrorPage
        title="Too many attempts"
        error="rate_limited"
        description="Too many wrong codes were entered. Wait a minute and try again."
      />,
      429,
    );

  /** The pending grant for the typed code, or the entry page again with the reason. */
  const find = async (request: FastifyRequest, reply: FastifyReply, actor: Actor, csrf: string, typed: string) => {
    // Counted before the lookup and given back when the code is found, so concurrent guesses
    // cannot all be looked up before the first wrong one is counted.
    const reservation = await limiter.reserve(LIMIT_NAME, keys(request, actor), limit);
    if (!reservation.allowed) return { sent: tooMany(reply, reservation.error) };
    const found = await device.lookup(typed);
    if (found.kind === 'found') {
      await reservation.release();
      return { found };
    }
    const error = { unknown: 'The user code is invalid.', expired: 'The user code has expired.', used: 'The user code was already used.' }[
      found.kind
    ];
    return { sent: sendPage(reply, <DeviceEntryPage page={pageLike(actor, csrf)} userCode={typed} error={error} />, 422) };
  };

  app.get('/oauth/device', { config: NONE }, async (request, reply) => {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return reply;
    const csrf = pageAuth.pageCsrf(request, reply);
    const prefill = text((request.query as Record<string, unknown>).user_code);
    return sendPage(reply, <DeviceEntryPage page={pageLike(actor, csrf)} userCode={prefill} />);
  });

  app.post('/oauth/device', { config: NONE, bodyLimit: 16 * 1024 }, async (request, reply) => {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return reply;
    const csrf = pageAuth.pageCsrf(request, reply);
    const typed = text(bodyOf(request).user_code);
    if (!pageAuth.verifyPageCsrf(request)) {
      return sendPage(
        reply,
        <DeviceEntryPage page={pageLike(actor, csrf)} userCode={typed} error="The form has expired. Try again." />,
        403,
      );
    }
    const result = await find(request, reply, actor, csrf, typed);
    if (!result.found) return result.sent;
    const { application, scopes } = result.found;
    const display = formatUserCode(normalizeUserCode(typed));
    return sendPage(reply, <DeviceConfirmPage page={pageLike(actor, csrf)} userCode={display} application={application} scopes={scopes} />);
  });

  app.post('/oauth/device/confirm', { config: NONE, bodyLimit: 16 * 1024 }, async (request, reply) => {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return reply;
    const csrf = pageAuth.pageCsrf(request, reply);
    const body = bodyOf(request);
    const typed = text(body.user_code);
    if (!pageAuth.verifyPageCsrf(request)) {
      return sendPage(
        reply,
        <DeviceEntryPage page={pageLike(actor, csrf)} userCode={typed} error="The form has expired. Try again." />,
        403,
      );
    }
    const result = await find(request, reply, actor, csrf, typed);
    if (!result.found) return result.sent;
    const approved = body.decision === 'approve';
    if (!(await device.decide(result.found.grant, actor.user.id, approved))) {
      return sendPage(
        reply,
        <DeviceEntryPage page={pageLike(actor, csrf)} userCode={typed} error="The user code was already used." />,
        422,
      );
    }
    return sendPage(reply, <DeviceDonePage page={pageLike(actor, csrf)} approved={approved} />);
  });
}
