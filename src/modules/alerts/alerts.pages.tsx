import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { IntegerId, deepestPage, type ApiApp } from '../../infra/http/index.js';
import { Layout, ROLE, formErrorsOf, sendPage, type Crumb, type FieldErrors } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { AlertsDeps } from './alerts.deps.js';
import { integrationUrl } from './alerts.presenter.js';
import { ALERT_STATUSES } from './alerts.repository.js';
import { MAX_ALERT_IID } from './alerts.schemas.js';
import { AlertDetail, AlertList, MonitorSettings, PAGES, type CreatedIntegration, type TestAlertInput } from './alerts.views.js';
import { testPayload } from './test-alert.rules.js';

export { PAGES } from './alerts.views.js';

const PER_PAGE = 20;
const ProjectRef = Type.String({ minLength: 1, maxLength: 1024 });
const Iid = Type.Integer({ minimum: 1, maximum: MAX_ALERT_IID });
const Token = Type.Optional(Type.String({ maxLength: 256 }));
const ProjectParams = Type.Object({ project: ProjectRef });
const AlertParams = Type.Object({ project: ProjectRef, iid: Iid });
const IntegrationParams = Type.Object({ project: ProjectRef, integration_id: IntegerId });
const ListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal(''), ...ALERT_STATUSES.map((s) => Type.Literal(s))])),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: deepestPage(PER_PAGE) })),
});
const StatusForm = Type.Object({ authenticity_token: Token, status: Type.Union(ALERT_STATUSES.map((s) => Type.Literal(s))) });
const IntegrationForm = Type.Object({
  authenticity_token: Token,
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: Type.Optional(Type.Union([Type.Literal('http'), Type.Literal('prometheus')])),
});
const TestAlertForm = Type.Object({ authenticity_token: Token, payload: Type.Optional(Type.String({ maxLength: 1_000_000 })) });

const queryOf = (request: FastifyRequest) => {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at);
};

/**
 * Monitor > Alerts at `/<full_path>/-/alert_management` (Developer and above, as the API) and
 * Settings > Monitor at `/<full_path>/-/settings/operations` (Maintainer and Owner): alert
 * integrations, and the error-tracking section that module gives. The former
 * `/-/projects/:id/alerts…` and `/-/projects/:id/settings/alerts` answer 301 to them.
 */
export function alertsPages(web: ApiApp, deps: AlertsDeps): void {
  const { alerts, integrations, ingest, platform, settingsSections } = deps;
  const base = platform.config.externalUrl;

  const resolved = (request: FastifyRequest) => {
    const { row, level } = request.page.project!;
    return { project: row as ProjectRow, level };
  };

  const frame = async (
    request: FastifyRequest,
    title: string,
    current: 'alerts' | 'settings',
    crumbs: Crumb[],
    body: preact.VNode,
  ): Promise<preact.VNode> => {
    const { project, level } = resolved(request);
    const trail = await deps.trail(project, request.page.actor);
    return (
      <Layout
        title={`${title} · ${project.name}`}
        page={request.page}
        crumbs={[...trail, { label: project.name, href: `/${project.full_path}` }, ...crumbs]}
        project={{ fullPath: project.full_path, name: project.name, level, current }}
      >
        {body}
      </Layout>
    );
  };

  const settingsPage = async (
    request: FastifyRequest,
    state: { created?: CreatedIntegration; test?: TestAlertInput; create?: { input: Record<string, unknown>; errors: FieldErrors } } = {},
  ) => {
    const { project } = resolved(request);
    const rows = await integrations.list(project);
    const sections = await Promise.all(
      settingsSections.map(async (section) => section.render(project, await section.data(project), request.page.csrf)),
    );
    return frame(
      request,
      'Monitor settings',
      'settings',
      [{ label: 'Settings' }, { label: 'Monitor' }],
      <MonitorSettings
        project={project}
        integrations={rows.map((row) => ({ row, url: integrationUrl(row, project, base) }))}
        csrf={request.page.csrf}
        created={state.created ?? null}
        test={state.test ?? null}
        create={state.create ?? null}
      >
        {sections}
      </MonitorSettings>,
    );
  };

  const createForm = async (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) =>
    settingsPage(request, { create: { input, errors } });
  const testForm = async (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) =>
    settingsPage(request, {
      test: {
        integrationId: Number((request.params as { integration_id?: unknown }).integration_id),
        payload: typeof input.payload === 'string' ? input.payload : '',
        errors,
      },
    });

  const alertsCrumbs = (project: ProjectRow, more: Crumb[]): Crumb[] =>
    more.length === 0
      ? [{ label: 'Monitor' }, { label: 'Alerts' }]
      : [{ label: 'Monitor' }, { label: 'Alerts', href: PAGES.list(project.full_path) }, ...more];

  web.get(
    '/-/p/:project/alert_management',
    { schema: { params: ProjectParams, querystring: ListQuery }, config: { page: { signIn: 'required', project: ROLE.developer } } },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const status = request.query.status || undefined;
      const search = request.query.search?.trim() ?? '';
      const pageNumber = request.query.page ?? 1;
      const [{ rows, total }, counts] = await Promise.all([
        alerts.list(
          project,
          { statuses: status ? [status] : undefined, search: search || undefined, sort: 'created_at_desc' },
          { page: pageNumber, perPage: PER_PAGE, limit: PER_PAGE, offset: (pageNumber - 1) * PER_PAGE },
        ),
        alerts.statusCounts(project),
      ]);
      return sendPage(
        reply,
        await frame(
          request,
          'Alerts',
          'alerts',
          alertsCrumbs(project, []),
          <AlertList
            project={project}
            rows={rows}
            total={total}
            page={pageNumber}
            status={status}
            search={search}
            counts={counts}
            canConfigure={level >= ROLE.maintainer}
          />,
        ),
      );
    },
  );

  web.get(
    '/-/p/:project/alert_management/:iid/details',
    { schema: { params: AlertParams }, config: { page: { signIn: 'required', project: ROLE.developer } } },
    async (request, reply) => {
      const { project } = resolved(request);
      const alert = await alerts.get(project, request.params.iid);
      const shown = await deps.present(alert, project);
      return sendPage(
        reply,
        await frame(
          request,
          `Alert ${alert.iid}`,
          'alerts',
          alertsCrumbs(project, [{ label: `#${alert.iid}` }]),
          <AlertDetail project={project} alert={shown} csrf={request.page.csrf} />,
        ),
      );
    },
  );

  web.post(
    '/-/p/:project/alert_management/:iid/details/status',
    {
      schema: { params: AlertParams, body: StatusForm },
      bodyLimit: 16 * 1024,
      config: { page: { signIn: 'required', project: ROLE.developer } },
    },
    async (request, reply) => {
      const { project } = resolved(request);
      const alert = await alerts.updateStatus(project, request.params.iid, request.body.status);
      return reply.redirectWithFlash(PAGES.alert(project.full_path, alert.iid), {
        kind: 'notice',
        text: `Status changed to ${alert.status}.`,
      });
    },
  );

  web.get(
    '/-/p/:project/settings/operations',
    { schema: { params: ProjectParams }, config: { page: { signIn: 'required', project: ROLE.maintainer } } },
    async (request, reply) => sendPage(reply, await settingsPage(request)),
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations',
    {
      schema: { params: ProjectParams, body: IntegrationForm },
      bodyLimit: 64 * 1024,
      config: { page: { signIn: 'required', project: ROLE.maintainer, form: createForm } },
    },
    async (request, reply) => {
      const { project } = resolved(request);
      const name = request.body.name.trim();
      if (name === '') return sendPage(reply, await createForm(request, request.body, { name: 'Name must not be blank.' }), 400);
      try {
        const { row, token } = await integrations.create(project, { name, type: request.body.type ?? 'http' });
        // The key is shown on this answer only, never carried in a cookie: no redirect here.
        const created = { name: row.name, url: integrationUrl(row, project, base), token };
        return sendPage(reply, await settingsPage(request, { created }), 201);
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await createForm(request, request.body, errors), 400);
      }
    },
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/test',
    {
      schema: { params: IntegrationParams, body: TestAlertForm },
      bodyLimit: 2 * 1024 * 1024,
      config: { page: { signIn: 'required', project: ROLE.maintainer, form: testForm } },
    },
    async (request, reply) => {
      const { project } = resolved(request);
      const integration = await integrations.get(project, request.params.integration_id);
      const text = request.body.payload ?? '';
      const refuse = async (message: string) => sendPage(reply, await testForm(request, request.body, { payload: message }), 400);
      if (integration.active !== 1) return refuse('The integration is not active.');
      let payload: unknown = {};
      if (text.trim() !== '') {
        try {
          payload = JSON.parse(text);
        } catch (error) {
          return refuse(`The test payload is not valid JSON: ${(error as Error).message}`);
        }
      }
      await platform.limiter.enforce('alerts', `project:${project.id}`, platform.config.rateLimits.alerts);
      const created = await ingest.ingest(project, integration, testPayload(integration, payload, platform.clock.now()));
      const what = created.map((a) => `#${a.iid} ${a.title}`).join(', ');
      return reply.redirectWithFlash(PAGES.settings(project.full_path), {
        kind: 'notice',
        text: created.length > 0 ? `Test alert sent: alert ${what} is under Monitor > Alerts.` : 'Test alert sent; no alert was created.',
      });
    },
  );

  // The former addresses, for those who may read the project (a visitor signs in first; others get 404).
  const OldAlertParams = Type.Object({ project: ProjectRef, iid: Iid });
  const redirect = { signIn: 'optional', project: 0 } as const;
  web.get('/-/projects/:project/alerts', { schema: { params: ProjectParams }, config: { page: redirect } }, async (request, reply) =>
    reply.redirect(`${PAGES.list(resolved(request).project.full_path)}${queryOf(request)}`, 301),
  );
  web.get('/-/projects/:project/alerts/:iid', { schema: { params: OldAlertParams }, config: { page: redirect } }, async (request, reply) =>
    reply.redirect(PAGES.alert(resolved(request).project.full_path, request.params.iid), 301),
  );
  web.get(
    '/-/projects/:project/settings/alerts',
    { schema: { params: ProjectParams }, config: { page: redirect } },
    async (request, reply) => reply.redirect(PAGES.settings(resolved(request).project.full_path), 301),
  );
}
