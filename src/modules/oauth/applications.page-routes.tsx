import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { sendPage, type FieldErrors, fieldErrorsOf } from '../../web/index.js';
import {
  APPLICATIONS_PAGE,
  ApplicationsPage,
  EMPTY_INPUT,
  EditApplicationPage,
  inputOfBody,
  inputOfRow,
  type ApplicationInput,
} from './applications.pages.js';
import type { ApplicationsService, ApplicationWithSecret } from './applications.service.js';
import * as S from './oauth.schemas.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';
import { registrableScopes } from './scopes.rules.js';

/** The address the established product used before `/-/`; it answers the same pages. */
const OLD_PAGE = '/user_settings/applications';

const ApplicationForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  name: Type.String({ maxLength: OAUTH_DEFAULTS.maxNameLength }),
  redirect_uri: Type.String({ maxLength: OAUTH_DEFAULTS.maxRedirectUris * (OAUTH_DEFAULTS.maxRedirectUriLength + 2) }),
  confidential: Type.Optional(Type.String({ maxLength: 8 })),
  scopes: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })),
});
const ActionForm = Type.Object({ authenticity_token: Type.Optional(Type.String({ maxLength: 256 })) });

const idOf = (request: FastifyRequest) => (request.params as { id: number }).id;
const bodyOf = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;

/**
 * `/-/user_settings/applications` (and the older `/user_settings/applications`): the signed-in
 * user's own OAuth applications (add, Edit, renew secret, delete) and the applications they
 * authorized, each with Revoke. Forms post to the `/-/` address.
 */
export function applicationsPages(web: ApiApp, applications: ApplicationsService): void {
  const registrant = (request: FastifyRequest) => {
    const { user } = request.page.actor!;
    return { ownerId: user.id, isAdmin: user.isAdmin };
  };

  const listPage = async (
    request: FastifyRequest,
    input: ApplicationInput,
    errors: FieldErrors,
    revealed?: ApplicationWithSecret,
  ): Promise<preact.VNode> => {
    const { user } = request.page.actor!;
    const [own, authorizations] = await Promise.all([applications.list(user.id), applications.authorizations(user.id)]);
    return (
      <ApplicationsPage
        page={request.page}
        applications={own}
        authorizations={authorizations}
        scopes={registrableScopes(user.isAdmin)}
        input={input}
        errors={errors}
        revealed={revealed}
      />
    );
  };
  const createForm = (request: FastifyRequest, body: Record<string, unknown>, errors: FieldErrors) =>
    listPage(request, inputOfBody(body), errors);

  const editPage = async (request: FastifyRequest, input: ApplicationInput | null, errors: FieldErrors) => {
    const application = await applications.get(idOf(request), request.page.actor!.user.id);
    return (
      <EditApplicationPage
        page={request.page}
        application={application}
        scopes={registrableScopes(request.page.actor!.user.isAdmin)}
        input={input ?? inputOfRow(application)}
        errors={errors}
      />
    );
  };
  const editForm = (request: FastifyRequest, body: Record<string, unknown>, errors: FieldErrors) =>
    editPage(request, inputOfBody(body), errors);

  const signedIn = { signIn: 'required' } as const;
  const action = { schema: { params: S.ApplicationIdParams, body: ActionForm }, config: { page: signedIn } };
  const reveal = async (request: FastifyRequest, reply: FastifyReply, revealed: ApplicationWithSecret) =>
    sendPage(reply, await listPage(request, EMPTY_INPUT, {}, revealed));

  for (const base of [APPLICATIONS_PAGE, OLD_PAGE]) {
    web.get(base, { config: { page: signedIn } }, async (request, reply) => sendPage(reply, await listPage(request, EMPTY_INPUT, {})));

    web.post(
      base,
      { schema: { body: ApplicationForm }, bodyLimit: 64 * 1024, config: { page: { ...signedIn, form: createForm } } },
      async (request, reply) => {
        const input = inputOfBody(bodyOf(request));
        try {
          // The secret is in this answer only: it is never put in a cookie, a URL or the session.
          return await reveal(request, reply, await applications.create(input, registrant(request)));
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return sendPage(reply, await listPage(request, input, fieldErrorsOf(error)), 400);
        }
      },
    );

    web.get(`${base}/:id/edit`, { schema: { params: S.ApplicationIdParams }, config: { page: signedIn } }, async (request, reply) =>
      sendPage(reply, await editPage(request, null, {})),
    );

    web.post(
      `${base}/:id`,
      {
        schema: { params: S.ApplicationIdParams, body: ApplicationForm },
        bodyLimit: 64 * 1024,
        config: { page: { ...signedIn, form: editForm } },
      },
      async (request, reply) => {
        const input = inputOfBody(bodyOf(request));
        try {
          const updated = await applications.update(idOf(request), input, registrant(request));
          return reply.redirectWithFlash(APPLICATIONS_PAGE, { kind: 'notice', text: `Application ${updated.name} was updated.` });
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return sendPage(reply, await editPage(request, input, fieldErrorsOf(error)), 400);
        }
      },
    );

    web.post(`${base}/:id/renew`, action, async (request, reply) =>
      reveal(request, reply, await applications.renewSecret(idOf(request), request.page.actor!.user.id)),
    );

    web.post(`${base}/:id/delete`, action, async (request, reply) => {
      const application = await applications.get(idOf(request), request.page.actor!.user.id);
      await applications.remove(application.id, request.page.actor!.user.id);
      return reply.redirectWithFlash(APPLICATIONS_PAGE, { kind: 'notice', text: `Application ${application.name} was deleted.` });
    });

    web.post(`${base}/authorized/:id/revoke`, action, async (request, reply) => {
      const { user } = request.page.actor!;
      const authorized = (await applications.authorizations(user.id)).find((a) => a.application.id === idOf(request));
      // Revoking also ends codes and device grants not yet redeemed, which the list does not show.
      await applications.revokeAuthorization(user.id, idOf(request));
      const name = authorized?.application.name ?? 'the application';
      return reply.redirectWithFlash(APPLICATIONS_PAGE, { kind: 'notice', text: `Access of ${name} to your account was revoked.` });
    });
  }
}
