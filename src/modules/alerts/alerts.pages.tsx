import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import { AppError, BadRequestError, ForbiddenError } from '../../infra/errors/index.js';
import { deepestPage } from '../../infra/http/index.js';
import { Flash, Layout, sendPage } from '../../web/layout.js';
import { AccessLevel, type ProjectRow } from '../projects/index.js';
import type { AlertsDeps } from './alerts.deps.js';
import { integrationUrl } from './alerts.presenter.js';
import { ALERT_STATUSES, type AlertRow, type AlertStatus } from './alerts.repository.js';
import { MAX_ALERT_IID } from './alerts.schemas.js';
import type { IntegrationRow } from './integrations.repository.js';
import { AlertDetail, AlertList, IntegrationsView, type Notice } from './alerts.views.js';
import { testPayload } from './test-alert.js';

const NONE = { policy: { auth: 'none' as const } };
/** Page paths sit under `/-/`, which no project path can start with. Documented in docs/api.md. */
export const PAGES = {
  list: (id: number) => `/-/projects/${id}/alerts`,
  alert: (id: number, iid: number) => `/-/projects/${id}/alerts/${iid}`,
  settings: (id: number) => `/-/projects/${id}/settings/alerts`,
};

interface Params {
  id: string;
  iid?: string;
  integration_id?: string;
}

const formField = (request: FastifyRequest, name: string): string | undefined => {
  const body = request.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Alert pages: the list, one alert, and the integrations settings page. Sign-in and CSRF
 * come from the identity module's page helpers; access rules are the API's.
 */
export function alertsPages(app: FastifyInstance, deps: AlertsDeps): void {
  const { pageAuth, lookup, alerts, integrations, ingest, platform } = deps;
  const base = platform.config.externalUrl;

  /** Runs a page handler for a signed-in user with the project at `minLevel`; errors become pages. */
  const page =
    (
      minLevel: number,
      handler: (ctx: {
        request: FastifyRequest;
        reply: FastifyReply;
        actor: Actor;
        project: ProjectRow;
        level: number;
        csrf: string;
      }) => Promise<FastifyReply>,
    ) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const actor = await pageAuth.requireSignedIn(request, reply);
      if (!actor) return reply;
      const csrf = pageAuth.pageCsrf(request, reply);
      try {
        if (request.method === 'POST' && !pageAuth.verifyPageCsrf(request))
          throw new ForbiddenError('The form has expired. Go back and try again.');
        request.actor = actor;
        const { project, level } = await lookup.project(request, (request.params as Params).id, minLevel);
        return await handler({ request, reply, actor, project, level, csrf });
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        const body = error.body() as { message?: unknown };
        const message = typeof body.message === 'string' ? body.message : JSON.stringify(body.message ?? body);
        return sendPage(
          reply,
          <Layout title="Error" username={actor.user.username} csrf={csrf}>
            <h1>Something went wrong</h1>
            <Flash kind="error">{message}</Flash>
          </Layout>,
          error.status,
        );
      }
    };

  const renderSettings = async (
    reply: FastifyReply,
    actor: Actor,
    project: ProjectRow,
    csrf: string,
    level: number,
    notice: Notice | null,
    status = 200,
  ) => {
    const rows = level >= AccessLevel.MAINTAINER ? await integrations.list(project) : [];
    const views = rows.map((row: IntegrationRow) => ({ row, url: integrationUrl(row, project, base) }));
    return sendPage(
      reply,
      <Layout title={`Alert integrations · ${project.full_path}`} username={actor.user.username} csrf={csrf}>
        <IntegrationsView
          project={project}
          integrations={views}
          csrf={csrf}
          canConfigure={level >= AccessLevel.MAINTAINER}
          notice={notice}
          paths={PAGES}
        />
      </Layout>,
      status,
    );
  };

  app.get(
    '/-/projects/:id/alerts',
    { config: NONE },
    page(AccessLevel.DEVELOPER, async ({ request, reply, actor, project, csrf }) => {
      const query = request.query as Record<string, string | undefined>;
      const status = ALERT_STATUSES.includes(query.status as AlertStatus) ? (query.status as AlertStatus) : undefined;
      const pageNumber = Math.min(deepestPage(20), Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1));
      const { rows, total } = await alerts.list(
        project,
        { statuses: status ? [status] : undefined, search: query.search?.slice(0, 255) || undefined, sort: 'created_at_desc' },
        { page: pageNumber, perPage: 20, limit: 20, offset: (pageNumber - 1) * 20 },
      );
      const counts = await alerts.statusCounts(project);
      return sendPage(
        reply,
        <Layout title={`Alerts · ${project.full_path}`} username={actor.user.username} csrf={csrf}>
          <AlertList
            project={project}
            rows={rows}
            total={total}
            page={pageNumber}
            status={status}
            search={query.search ?? ''}
            counts={counts}
            paths={PAGES}
          />
        </Layout>,
      );
    }),
  );

  app.get(
    '/-/projects/:id/alerts/:iid',
    { config: NONE },
    page(AccessLevel.DEVELOPER, async ({ request, reply, actor, project, csrf }) => {
      const alert = await alerts.get(project, parseIid((request.params as Params).iid));
      return showAlert(reply, actor, project, csrf, alert, null);
    }),
  );

  app.post(
    '/-/projects/:id/alerts/:iid/status',
    { config: NONE, bodyLimit: 16 * 1024 },
    page(AccessLevel.DEVELOPER, async ({ request, reply, actor, project, csrf }) => {
      const status = formField(request, 'status');
      if (!ALERT_STATUSES.includes(status as AlertStatus)) throw new BadRequestError('Invalid status');
      const alert = await alerts.updateStatus(project, parseIid((request.params as Params).iid), status as AlertStatus);
      return showAlert(reply, actor, project, csrf, alert, { kind: 'notice', text: `Status changed to ${alert.status}.` });
    }),
  );

  const showAlert = async (
    reply: FastifyReply,
    actor: Actor,
    project: ProjectRow,
    csrf: string,
    alert: AlertRow,
    notice: Notice | null,
  ) => {
    const shown = await deps.present(alert, project);
    return sendPage(
      reply,
      <Layout title={`Alert ${alert.iid} · ${project.full_path}`} username={actor.user.username} csrf={csrf}>
        <AlertDetail project={project} alert={shown} csrf={csrf} notice={notice} paths={PAGES} />
      </Layout>,
    );
  };

  app.get(
    '/-/projects/:id/settings/alerts',
    { config: NONE },
    page(AccessLevel.DEVELOPER, async ({ reply, actor, project, level, csrf }) => {
      return renderSettings(reply, actor, project, csrf, level, null);
    }),
  );

  app.post(
    '/-/projects/:id/settings/alerts/integrations',
    { config: NONE, bodyLimit: 64 * 1024 },
    page(AccessLevel.MAINTAINER, async ({ request, reply, actor, project, csrf }) => {
      const type = formField(request, 'type') === 'prometheus' ? 'prometheus' : 'http';
      const name = (formField(request, 'name') ?? '').trim();
      if (name === '' || name.length > 255) throw new BadRequestError('Name must be 1 to 255 characters');
      const { row, token } = await integrations.create(project, { name, type });
      const notice: Notice = { kind: 'created', text: `Integration ${row.name} created.`, url: integrationUrl(row, project, base), token };
      return renderSettings(reply, actor, project, csrf, AccessLevel.MAINTAINER, notice, 201);
    }),
  );

  app.post(
    '/-/projects/:id/settings/alerts/integrations/:integration_id/test',
    { config: NONE, bodyLimit: 2 * 1024 * 1024 },
    page(AccessLevel.DEVELOPER, async ({ request, reply, actor, project, level, csrf }) => {
      const integration = await integrations.get(project, parseIid((request.params as Params).integration_id));
      if (integration.active !== 1) throw new ForbiddenError('The integration is not active');
      const text = (formField(request, 'payload') ?? '').trim();
      let payload: unknown = {};
      if (text !== '') {
        try {
          payload = JSON.parse(text);
        } catch (error) {
          throw new BadRequestError(`The test payload is not valid JSON: ${(error as Error).message}`);
        }
      }
      await platform.limiter.enforce('alerts', `project:${project.id}`, platform.config.rateLimits.alerts);
      const created = await ingest.ingest(project, integration, testPayload(integration, payload, platform.clock.now()));
      const notice: Notice = {
        kind: 'notice',
        text: created.length > 0 ? 'Test alert sent.' : 'Test alert sent; no alert was created.',
        links: created.map((a) => ({ href: PAGES.alert(project.id, a.iid), text: `#${a.iid} ${a.title}` })),
      };
      return renderSettings(reply, actor, project, csrf, level, notice);
    }),
  );
}

function parseIid(value: string | undefined): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_ALERT_IID || !/^\d+$/.test(value ?? ''))
    throw new BadRequestError('400 Bad request - invalid id');
  return n;
}
