import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.js';
import type { ApiApp, RateLimiter } from '../../infra/http/index.js';
import { sendPage, type FieldErrors } from '../../web/index.js';
import { formatUserCode, normalizeUserCode, type DeviceService } from './device.service.js';
import { DeviceConfirmPage, DeviceDonePage, DeviceEntryPage, OAuthErrorPage } from './oauth.pages.js';

export interface DeviceRouteDeps {
  device: DeviceService;
  limiter: RateLimiter;
  config: Config;
}

const LIMIT_NAME = 'user_code';
/** A user code as typed (dashes and spaces allowed); longer input is not a code. */
const UserCode = Type.String({ maxLength: 32 });
const EntryQuery = Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 256 })) });
const CodeForm = Type.Object({ authenticity_token: Type.Optional(Type.String({ maxLength: 256 })), user_code: UserCode });
const DecisionForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  user_code: UserCode,
  decision: Type.Optional(Type.Union([Type.Literal('approve'), Type.Literal('deny')])),
});

const typedCode = (input: Record<string, unknown>): string => (typeof input.user_code === 'string' ? input.user_code.slice(0, 32) : '');

/**
 * The verification page of RFC 8628 §3.3 (`/oauth/device`), on the page layer (sign-in, CSRF
 * and form checks are the layer's). Wrong codes count against the `user_code` rate limit per
 * user and per IP (RFC 8628 §5.1, checklist B6), so the ~34.5 bits of a user code cannot be
 * searched.
 */
export function devicePages(web: ApiApp, { device, limiter, config }: DeviceRouteDeps): void {
  const limit = config.rateLimits.user_code;
  const entry = (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) => (
    <DeviceEntryPage
      page={request.page}
      userCode={typedCode(input)}
      error={errors._ ?? (errors.user_code ? 'Enter the code your device shows.' : undefined)}
    />
  );
  const page = { signIn: 'required', form: entry } as const;
  // A page holding a user code must not leak it in Referer (RFC 9700 §4.2.4), whoever answers it.
  const onSend = async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.header('referrer-policy', 'no-referrer');
    return payload;
  };

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
  const find = async (request: FastifyRequest, reply: FastifyReply, typed: string) => {
    const actor = request.page.actor!;
    // Counted before the lookup and given back when the code is found, so concurrent guesses
    // cannot all be looked up before the first wrong one is counted.
    const reservation = await limiter.reserve(LIMIT_NAME, [`user:${actor.user.id}`, `ip:${request.ip}`], limit);
    if (!reservation.allowed) return { sent: tooMany(reply, reservation.error) };
    const found = await device.lookup(typed);
    if (found.kind === 'found') {
      await reservation.release();
      return { found };
    }
    const error = { unknown: 'The user code is invalid.', expired: 'The user code has expired.', used: 'The user code was already used.' }[
      found.kind
    ];
    return { sent: sendPage(reply, entry(request, { user_code: typed }, { _: error }), 422) };
  };

  web.get('/oauth/device', { schema: { querystring: EntryQuery }, config: { page }, onSend }, async (request, reply) =>
    sendPage(reply, entry(request, { user_code: request.query.user_code }, {})),
  );

  web.post('/oauth/device', { schema: { body: CodeForm }, bodyLimit: 16 * 1024, config: { page }, onSend }, async (request, reply) => {
    const typed = typedCode(request.body);
    const result = await find(request, reply, typed);
    if (!result.found) return result.sent;
    const { application, scopes } = result.found;
    const display = formatUserCode(normalizeUserCode(typed));
    return sendPage(reply, <DeviceConfirmPage page={request.page} userCode={display} application={application} scopes={scopes} />);
  });

  web.post(
    '/oauth/device/confirm',
    { schema: { body: DecisionForm }, bodyLimit: 16 * 1024, config: { page }, onSend },
    async (request, reply) => {
      const typed = typedCode(request.body);
      const result = await find(request, reply, typed);
      if (!result.found) return result.sent;
      const approved = request.body.decision === 'approve';
      if (!(await device.decide(result.found.grant, request.page.actor!.user.id, approved)))
        return sendPage(reply, entry(request, request.body, { _: 'The user code was already used.' }), 422);
      return sendPage(reply, <DeviceDonePage page={request.page} approved={approved} />);
    },
  );
}
