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
  USER_APPLICATIONS,
  inputOfBody,
  inputOfRow,
  type ApplicationInput,
  type ApplicationsArea,
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
  applicationPagesIn(web, applications, USER_APPLICATIONS, {
    addresses: [APPLICATIONS_PAGE, OLD_PAGE],
    policy: { signIn: 'required' },
    owner: (request) => request.page.actor!.user.id,
  });
}

/**
 * `/admin/applications`: the instance-wide applications (no owner), for administrators, in the
 * admin area's frame (given by the admin module, which this module does not know).
 */
export function instanceApplicationsPages(web: ApiApp, applications: ApplicationsService, frame: ApplicationsArea['frame']): void {
  const area: ApplicationsArea = {
    base: '/admin/applications',
    listTitle: 'Instance-wide applications',
    emptyText: 'No instance-wide application yet. Fill in the form above to register one for every user of this instance.',
    authorized: false,
    frame,
  };
  applicationPagesIn(web, applications, area, { addresses: [area.base], policy: { signIn: 'required', admin: true }, owner: () => null });
}

interface AreaRoutes {
  /** Every address the pages answer at; forms post to the area's own. */
  addresses: readonly string[];
  policy: { signIn: 'required'; admin?: true };
  /** Whose applications: a user's id, or null for the instance-wide ones. */
  owner: (request: FastifyRequest) => number | null;
}

function applicationPagesIn(web: ApiApp, applications: ApplicationsService, area: ApplicationsArea, routes: AreaRoutes): void {
  const owner = routes.owner;
  const registrant = (request: FastifyRequest) => ({
    ownerId: owner(request),
    isAdmin: request.page.actor!.user.isAdmin,
    by: request.page.actor,
  });
  const ownApplications = async (request: FastifyRequest) => {
    const ownerId = owner(request);
    // The admin's list is the applications nobody owns; list(null) gives every application.
    return ownerId === null ? (await applications.list(null)).filter((app) => app.owner_id === null) : applications.list(ownerId);
  };

  const listPage = async (
    request: FastifyRequest,
    input: ApplicationInput,
    errors: FieldErrors,
    revealed?: ApplicationWithSecret,
  ): Promise<preact.VNode> => {
    const { user } = request.page.actor!;
    const [own, authorizations] = await Promise.all([
      ownApplications(request),
      area.authorized ? applications.authorizations(user.id) : Promise.resolve([]),
    ]);
    return (
      <ApplicationsPage
        area={area}
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
    const application = await applications.get(idOf(request), owner(request));
    return (
      <EditApplicationPage
        area={area}
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

  const signedIn = routes.policy;
  const action = { schema: { params: S.ApplicationIdParams, body: ActionForm }, config: { page: signedIn } };
  const reveal = async (request: FastifyRequest, reply: FastifyReply, revealed: ApplicationWithSecret) =>
    sendPage(reply, await listPage(request, EMPTY_INPUT, {}, revealed));

  for (const base of routes.addresses) {
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
          return reply.redirectWithFlash(area.base, { kind: 'notice', text: `Application ${updated.name} was updated.` });
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          return sendPage(reply, await editPage(request, input, fieldErrorsOf(error)), 400);
        }
      },
    );

    web.post(`${base}/:id/renew`, action, async (request, reply) =>
      reveal(request, reply, await applications.renewSecret(idOf(request), owner(request), request.page.actor)),
    );

    web.post(`${base}/:id/delete`, action, async (request, reply) => {
      const application = await applications.get(idOf(request), owner(request));
      await applications.remove(application.id, owner(request), request.page.actor);
      return reply.redirectWithFlash(area.base, { kind: 'notice', text: `Application ${application.name} was deleted.` });
    });

    if (!area.authorized) continue;
    web.post(`${base}/authorized/:id/revoke`, action, async (request, reply) => {
      const { user } = request.page.actor!;
      const authorized = (await applications.authorizations(user.id)).find((a) => a.application.id === idOf(request));
      // Revoking also ends codes and device grants not yet redeemed, which the list does not show.
      await applications.revokeAuthorization(user.id, idOf(request), request.page.actor);
      const name = authorized?.application.name ?? 'the application';
      return reply.redirectWithFlash(area.base, { kind: 'notice', text: `Access of ${name} to your account was revoked.` });
    });
  }
}
