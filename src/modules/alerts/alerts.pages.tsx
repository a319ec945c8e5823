import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { renderToString } from 'preact-render-to-string';
import { VersionCache } from '../../infra/db/index.js';
import { IntegerId, deepestPage, type ApiApp } from '../../infra/http/index.js';
import { Layout, ROLE, formErrorsOf, sendPage, type Crumb, type FieldErrors } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { AlertsDeps } from './alerts.deps.js';
import { integrationUrl } from './alerts.presenter.js';
import { ALERT_STATUSES } from './alerts.repository.js';
import { MAX_ALERT_IID } from './alerts.schemas.js';
import {
  ALERT_TABS,
  ALERTS_PER_PAGE,
  AlertDetail,
  COUNT_CAP,
  AlertList,
  DEFAULT_SORT,
  PAGES,
  PAGE_SORTS,
  TAB_STATUSES,
  tabCount,
  type AlertListState,
} from './alerts.views.js';
import { multipleIntegrations } from './integrations.service.js';
import type { IntegrationRow } from './integrations.repository.js';
import { mappedDocument, readExample, readMappings } from './mappings.rules.js';
import { ConfirmPage, MappingPage, MonitorSettings, type IntegrationFormInput, type RevealedKey } from './monitor-settings.views.js';
import { SEVERITIES } from './normalize-common.rules.js';
import { MAPPABLE_FIELDS, mappingType, pathKey, samplePaths } from './sample-paths.rules.js';
import { testPayload } from './test-alert.rules.js';

export { PAGES } from './alerts.views.js';

const ProjectRef = Type.String({ minLength: 1, maxLength: 1024 });
const Iid = Type.Integer({ minimum: 1, maximum: MAX_ALERT_IID });
const Token = Type.Optional(Type.String({ maxLength: 256 }));
const ProjectParams = Type.Object({ project: ProjectRef });
const AlertParams = Type.Object({ project: ProjectRef, iid: Iid });
const IntegrationParams = Type.Object({ project: ProjectRef, integration_id: IntegerId });
const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const ListQuery = Type.Object({
  tab: Type.Optional(literals(ALERT_TABS)),
  // The former list's `status=` (a single status, '' for all) still filters.
  status: Type.Optional(Type.Union([Type.Literal(''), ...ALERT_STATUSES.map((s) => Type.Literal(s))])),
  severity: Type.Optional(Type.Union([Type.Literal(''), ...SEVERITIES.map((s) => Type.Literal(s))])),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  sort: Type.Optional(literals(PAGE_SORTS)),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: deepestPage(ALERTS_PER_PAGE) })),
});
const StatusForm = Type.Object({ authenticity_token: Token, status: literals(ALERT_STATUSES) });
const AssigneeForm = Type.Object({
  authenticity_token: Token,
  assignee_id: Type.Union([Type.Literal(''), Type.String({ pattern: '^[0-9]{1,18}$' })]),
});
const EmptyForm = Type.Object({ authenticity_token: Token });
const IntegrationForm = Type.Object({
  authenticity_token: Token,
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: Type.Optional(Type.Union([Type.Literal('http'), Type.Literal('prometheus')])),
});
const EditIntegrationForm = Type.Object({
  authenticity_token: Token,
  name: Type.String({ maxLength: 255 }),
  active: Type.Optional(Type.Literal('1')),
});
const TestAlertForm = Type.Object({ authenticity_token: Token, payload: Type.Optional(Type.String({ maxLength: 1_000_000 })) });
const SampleForm = Type.Object({ authenticity_token: Token, payload_example: Type.String({ maxLength: 1_000_000 }) });
const MappingForm = Type.Object({
  authenticity_token: Token,
  ...Object.fromEntries(MAPPABLE_FIELDS.map((f) => [`map_${f}`, Type.Optional(Type.String({ maxLength: 4096 }))])),
});
const SettingsForm = Type.Object({
  authenticity_token: Token,
  create_issue: Type.Optional(Type.Literal('1')),
  auto_close_incident: Type.Optional(Type.Literal('1')),
  send_email: Type.Optional(Type.Literal('1')),
});

const queryOf = (request: FastifyRequest) => {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at);
};

/**
 * Monitor > Alerts at `/<full_path>/-/alert_management` (Developer and above, as the API) and
 * Settings > Monitor at `/<full_path>/-/settings/operations` (Maintainer and Owner): alert
 * integrations (create, edit, re-key, delete, test, custom mapping on its own page), the alert
 * settings, and the error-tracking section that module gives. The former
 * `/-/projects/:id/alerts…` and `/-/projects/:id/settings/alerts` answer 301 to them.
 */
export function alertsPages(web: ApiApp, deps: AlertsDeps): void {
  const { alerts, integrations, ingest, platform, settingsSections, people } = deps;
  const base = platform.config.externalUrl;
  const mappingAvailable = multipleIntegrations(platform.config.tier);
  const maintainer = { signIn: 'required', project: ROLE.maintainer } as const;
  const developer = { signIn: 'required', project: ROLE.developer } as const;

  const resolved = (request: FastifyRequest) => {
    const { row, level } = request.page.project!;
    return { project: row as ProjectRow, level };
  };
  const actorId = (request: FastifyRequest) => request.page.actor!.user.id;

  const frame = async (
    request: FastifyRequest,
    title: string,
    current: 'alerts' | 'settings',
    crumbs: Crumb[],
    body: preact.VNode,
  ): Promise<preact.VNode> => {
    const { project, level } = resolved(request);
    const trail = await deps.trail(project, request.page.actor, request);
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

  const keptLists = new VersionCache<string>({
    dataVersion: (scope) => platform.database.dataVersion(scope),
    clock: platform.clock,
    ttlMs: 10_000,
    // Nothing in the list moves with time alone (access is checked before it, per view): a list
    // past 10 s of the same data is served while the next one is drawn.
    refreshBehind: true,
    maxEntries: 500,
    maxBytes: 16 * 1024 * 1024,
  });

  const settingsCrumbs = (project: ProjectRow, more: Crumb[] = []): Crumb[] =>
    more.length === 0
      ? [{ label: 'Settings' }, { label: 'Monitor' }]
      : [{ label: 'Settings' }, { label: 'Monitor', href: PAGES.settings(project.full_path) }, ...more];

  const settingsPage = async (
    request: FastifyRequest,
    state: {
      revealed?: RevealedKey;
      refused?: IntegrationFormInput;
      create?: { input: Record<string, unknown>; errors: FieldErrors };
    } = {},
  ) => {
    const { project } = resolved(request);
    const [rows, settings] = await Promise.all([integrations.list(project), alerts.settings(project)]);
    const sections = await Promise.all(
      settingsSections.map(async (section) => section.render(project, await section.data(project), request.page.csrf)),
    );
    return frame(
      request,
      'Monitor settings',
      'settings',
      settingsCrumbs(project),
      <MonitorSettings
        project={project}
        integrations={rows.map((row) => ({ row, url: integrationUrl(row, project, base) }))}
        settings={settings}
        csrf={request.page.csrf}
        revealed={state.revealed ?? null}
        refused={state.refused ?? null}
        create={state.create ?? null}
        mappingAvailable={mappingAvailable}
      >
        {sections}
      </MonitorSettings>,
    );
  };

  const integrationIdOf = (request: FastifyRequest) => Number((request.params as { integration_id?: unknown }).integration_id);
  const createForm = async (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) =>
    settingsPage(request, { create: { input, errors } });
  const integrationForm =
    (form: IntegrationFormInput['form']) => async (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) =>
      settingsPage(request, { refused: { integrationId: integrationIdOf(request), form, input, errors } });
  const testForm = integrationForm('test');
  const editForm = integrationForm('edit');

  const alertsCrumbs = (project: ProjectRow, more: Crumb[]): Crumb[] =>
    more.length === 0
      ? [{ label: 'Monitor' }, { label: 'Alerts' }]
      : [{ label: 'Monitor' }, { label: 'Alerts', href: PAGES.list(project.full_path) }, ...more];

  // ---- Monitor > Alerts ----

  web.get(
    '/-/p/:project/alert_management',
    { schema: { params: ProjectParams, querystring: ListQuery }, config: { page: developer } },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const q = request.query;
      const state: AlertListState = {
        tab: q.tab ?? (q.status === '' ? 'all' : 'open'),
        severity: q.severity ?? '',
        search: q.search?.trim() ?? '',
        sort: q.sort ?? DEFAULT_SORT,
        page: q.page ?? 1,
      };
      // A former `status=<one>` link: that status alone (its tab when it has one).
      const legacy = q.status && q.tab === undefined ? q.status : undefined;
      if (legacy && (ALERT_TABS as readonly string[]).includes(legacy)) state.tab = legacy as AlertListState['tab'];
      const statuses = legacy ? [legacy] : TAB_STATUSES[state.tab];
      const canConfigure = level >= ROLE.maintainer;
      // The list as drawn, kept until the next commit to the database (10 s at most): asked for far
      // more often than alerts change, and its counts and rows read indexes of 100,000 rows.
      const list = await keptLists.through(
        JSON.stringify([project.id, canConfigure, state, legacy ?? null]),
        async () => {
          const counts = await alerts.statusCounts(project, COUNT_CAP);
          const filter = {
            statuses,
            severities: state.severity ? [state.severity] : undefined,
            search: state.search || undefined,
            sort: state.sort,
          };
          // One row more than a page tells whether there is a next one; nothing is counted beyond the capped tabs.
          const found = await alerts.rows(project, filter, ALERTS_PER_PAGE + 1, (state.page - 1) * ALERTS_PER_PAGE);
          const rows = found.slice(0, ALERTS_PER_PAGE);
          // The tab's count is the page's total unless a search or severity narrows it, or it passed the cap.
          const narrowed = state.search !== '' || state.severity !== '' || legacy === 'ignored';
          const tabTotal = tabCount(state.tab, counts);
          const total = narrowed || tabTotal > COUNT_CAP ? null : tabTotal;
          return renderToString(
            <AlertList
              project={project}
              rows={rows}
              total={total}
              hasNext={found.length > ALERTS_PER_PAGE}
              state={state}
              counts={counts}
              canConfigure={canConfigure}
            />,
          );
        },
        (html) => html.length,
        request,
      );
      return sendPage(
        reply,
        await frame(
          request,
          'Alerts',
          'alerts',
          alertsCrumbs(project, []),
          // Drawn by AlertList from escaped values (keptLists).
          <div class="alert-list" dangerouslySetInnerHTML={{ __html: list }} />,
        ),
      );
    },
  );

  web.get(
    '/-/p/:project/alert_management/:iid/details',
    { schema: { params: AlertParams }, config: { page: developer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const alert = await alerts.get(project, request.params.iid);
      const [shown, activity, assignable] = await Promise.all([
        deps.present(alert, project),
        alerts.activityOf(alert),
        people.assignable(project),
      ]);
      const ids = [
        ...activity.flatMap((a) => (a.author_id === null ? [] : [a.author_id])),
        ...(alert.assignee_id === null ? [] : [alert.assignee_id]),
      ];
      const named = await people.byIds(ids);
      return sendPage(
        reply,
        await frame(
          request,
          `Alert ${alert.iid}`,
          'alerts',
          alertsCrumbs(project, [{ label: `#${alert.iid}` }]),
          <AlertDetail
            project={project}
            alert={shown}
            row={alert}
            csrf={request.page.csrf}
            activity={activity}
            people={named}
            assignable={assignable}
          />,
        ),
      );
    },
  );

  web.post(
    '/-/p/:project/alert_management/:iid/details/status',
    { schema: { params: AlertParams, body: StatusForm }, bodyLimit: 16 * 1024, config: { page: developer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const alert = await alerts.updateStatus(project, request.params.iid, request.body.status, actorId(request));
      return reply.redirectWithFlash(PAGES.alert(project.full_path, alert.iid), {
        kind: 'notice',
        text: `Status changed to ${alert.status}.`,
      });
    },
  );

  web.post(
    '/-/p/:project/alert_management/:iid/details/assignee',
    { schema: { params: AlertParams, body: AssigneeForm }, bodyLimit: 16 * 1024, config: { page: developer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const page = PAGES.alert(project.full_path, request.params.iid);
      const wanted = request.body.assignee_id === '' ? null : Number(request.body.assignee_id);
      const assignee = wanted === null ? null : (await people.assignable(project)).find((p) => p.id === wanted);
      if (assignee === undefined) {
        return reply.redirectWithFlash(page, { kind: 'error', text: 'The assignee must be a member of the project who may see alerts.' });
      }
      await alerts.assign(project, request.params.iid, assignee, actorId(request));
      return reply.redirectWithFlash(page, { kind: 'notice', text: assignee ? `Assigned to @${assignee.username}.` : 'Assignee removed.' });
    },
  );

  web.post(
    '/-/p/:project/alert_management/:iid/details/incident',
    { schema: { params: AlertParams, body: EmptyForm }, bodyLimit: 16 * 1024, config: { page: developer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const { alert, issueIid } = await alerts.createIncident(project, request.params.iid, actorId(request));
      return reply.redirectWithFlash(PAGES.alert(project.full_path, alert.iid), {
        kind: 'notice',
        text: issueIid === null ? 'The alert already has an incident.' : `Incident #${issueIid} created.`,
      });
    },
  );

  // ---- Settings > Monitor ----

  web.get(
    '/-/p/:project/settings/operations',
    { schema: { params: ProjectParams }, config: { page: maintainer } },
    async (request, reply) => sendPage(reply, await settingsPage(request)),
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations',
    {
      schema: { params: ProjectParams, body: IntegrationForm },
      bodyLimit: 64 * 1024,
      config: { page: { ...maintainer, form: createForm } },
    },
    async (request, reply) => {
      const { project } = resolved(request);
      const name = request.body.name.trim();
      if (name === '') return sendPage(reply, await createForm(request, request.body, { name: 'Name must not be blank.' }), 400);
      try {
        const { row, token } = await integrations.create(project, { name, type: request.body.type ?? 'http' }, request.page.actor);
        // The key is shown on this answer only, never carried in a cookie: no redirect here.
        const revealed: RevealedKey = { name: row.name, url: integrationUrl(row, project, base), token, what: 'created' };
        return sendPage(reply, await settingsPage(request, { revealed }), 201);
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await createForm(request, request.body, errors), 400);
      }
    },
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id',
    {
      schema: { params: IntegrationParams, body: EditIntegrationForm },
      bodyLimit: 64 * 1024,
      config: { page: { ...maintainer, form: editForm } },
    },
    async (request, reply) => {
      const { project } = resolved(request);
      const name = request.body.name.trim();
      if (name === '') return sendPage(reply, await editForm(request, request.body, { name: 'Name must not be blank.' }), 400);
      try {
        const row = await integrations.update(
          project,
          request.params.integration_id,
          { name, active: request.body.active === '1' },
          request.page.actor,
        );
        return reply.redirectWithFlash(PAGES.settings(project.full_path), {
          kind: 'notice',
          text: `Integration ${row.name} saved (${row.active === 1 ? 'active' : 'inactive'}).`,
        });
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await editForm(request, request.body, errors), 400);
      }
    },
  );

  const integrationPage = async (request: FastifyRequest, integration: IntegrationRow, title: string, body: preact.VNode) => {
    const { project } = resolved(request);
    return frame(request, title, 'settings', settingsCrumbs(project, [{ label: integration.name }]), body);
  };

  web.get(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/reset_token',
    { schema: { params: IntegrationParams }, config: { page: maintainer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const integration = await integrations.get(project, request.params.integration_id);
      const action = `${PAGES.integration(project.full_path, integration.id)}/reset_token`;
      return sendPage(
        reply,
        await integrationPage(
          request,
          integration,
          'Reset key',
          <ConfirmPage
            title={`Reset the key of ${integration.name}?`}
            action={action}
            button="Reset key"
            cancel={PAGES.settings(project.full_path)}
            csrf={request.page.csrf}
            danger
          >
            A new key is made and shown once; the current key stops working at once, so the monitoring tool must be given the new one.
          </ConfirmPage>,
        ),
      );
    },
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/reset_token',
    { schema: { params: IntegrationParams, body: EmptyForm }, bodyLimit: 16 * 1024, config: { page: maintainer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const { row, token } = await integrations.resetToken(project, request.params.integration_id, request.page.actor);
      const revealed: RevealedKey = { name: row.name, url: integrationUrl(row, project, base), token, what: 'reset' };
      return sendPage(reply, await settingsPage(request, { revealed }));
    },
  );

  web.get(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/delete',
    { schema: { params: IntegrationParams }, config: { page: maintainer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const integration = await integrations.get(project, request.params.integration_id);
      const action = `${PAGES.integration(project.full_path, integration.id)}/delete`;
      return sendPage(
        reply,
        await integrationPage(
          request,
          integration,
          'Delete integration',
          <ConfirmPage
            title={`Delete ${integration.name}?`}
            action={action}
            button="Delete integration"
            cancel={PAGES.settings(project.full_path)}
            csrf={request.page.csrf}
            danger
          >
            Its URL stops accepting alerts. The alerts it brought stay.
          </ConfirmPage>,
        ),
      );
    },
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/delete',
    { schema: { params: IntegrationParams, body: EmptyForm }, bodyLimit: 16 * 1024, config: { page: maintainer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const integration = await integrations.get(project, request.params.integration_id);
      await integrations.remove(project, integration.id, request.page.actor);
      return reply.redirectWithFlash(PAGES.settings(project.full_path), {
        kind: 'notice',
        text: `Integration ${integration.name} deleted.`,
      });
    },
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/test',
    {
      schema: { params: IntegrationParams, body: TestAlertForm },
      bodyLimit: 2 * 1024 * 1024,
      config: { page: { ...maintainer, form: testForm } },
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
      let created;
      try {
        created = await ingest.ingest(project, integration, testPayload(integration, payload, platform.clock.now()));
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return refuse(errors._ ?? Object.values(errors).join(' '));
      }
      const what = created.map((a) => `#${a.iid} ${a.title}`).join(', ');
      return reply.redirectWithFlash(PAGES.settings(project.full_path), {
        kind: 'notice',
        text: created.length > 0 ? `Test alert sent: alert ${what} is under Monitor > Alerts.` : 'Test alert sent; no alert was created.',
      });
    },
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/settings',
    { schema: { params: ProjectParams, body: SettingsForm }, bodyLimit: 16 * 1024, config: { page: maintainer } },
    async (request, reply) => {
      const { project } = resolved(request);
      await alerts.updateSettings(project, {
        create_issue: request.body.create_issue === '1',
        auto_close_incident: request.body.auto_close_incident === '1',
        send_email: request.body.send_email === '1',
      });
      return reply.redirectWithFlash(PAGES.settings(project.full_path), { kind: 'notice', text: 'Alert settings saved.' });
    },
  );

  // ---- Custom field mapping (HTTP integrations, Premium and Ultimate) ----

  const mappingPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    integration: IntegrationRow,
    refused: { sampleText?: string; sampleError?: string; mappingErrors?: FieldErrors } = {},
    status = 200,
  ) => {
    const { project } = resolved(request);
    const example = readExample(integration.payload_example);
    const document = example ? mappedDocument(example) : null;
    return sendPage(
      reply,
      await integrationPage(
        request,
        integration,
        'Custom field mapping',
        <MappingPage
          project={project}
          integration={integration}
          csrf={request.page.csrf}
          available={mappingAvailable}
          sampleText={refused.sampleText ?? (example ? JSON.stringify(example, null, 2) : '')}
          sampleError={refused.sampleError ?? null}
          paths={document ? samplePaths(document) : null}
          perItem={example !== null && document !== example}
          mapping={readMappings(integration.payload_attribute_mappings)}
          mappingErrors={refused.mappingErrors ?? null}
        />,
      ),
      status,
    );
  };
  const httpIntegration = async (request: FastifyRequest & { params: { integration_id: number } }) => {
    const integration = await integrations.get(resolved(request).project, request.params.integration_id);
    return integration;
  };

  web.get(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/mapping',
    { schema: { params: IntegrationParams }, config: { page: maintainer } },
    async (request, reply) => mappingPage(request, reply, await httpIntegration(request)),
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/mapping/sample',
    { schema: { params: IntegrationParams, body: SampleForm }, bodyLimit: 2 * 1024 * 1024, config: { page: maintainer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const integration = await httpIntegration(request);
      const text = request.body.payload_example;
      if (!mappingAvailable) return mappingPage(request, reply, integration, {}, 403);
      try {
        // A changed sample clears the mapping (the service, as for the API).
        await integrations.update(project, integration.id, { payload_example: text.trim() === '' ? null : text }, request.page.actor);
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return mappingPage(
          request,
          reply,
          integration,
          {
            sampleText: text,
            sampleError: errors.payload_example ? `The sample ${errors.payload_example}` : (errors._ ?? 'The sample is not valid.'),
          },
          400,
        );
      }
      return reply.redirectWithFlash(PAGES.mapping(project.full_path, integration.id), {
        kind: 'notice',
        text: 'Sample saved. Pick a path for each field you want to map.',
      });
    },
  );

  web.post(
    '/-/p/:project/settings/operations/alerts/integrations/:integration_id/mapping',
    { schema: { params: IntegrationParams, body: MappingForm }, bodyLimit: 128 * 1024, config: { page: maintainer } },
    async (request, reply) => {
      const { project } = resolved(request);
      const integration = await httpIntegration(request);
      if (!mappingAvailable) return mappingPage(request, reply, integration, {}, 403);
      const example = readExample(integration.payload_example);
      const paths = new Map((example ? samplePaths(mappedDocument(example)) : []).map((p) => [pathKey(p.path), p]));
      const body = request.body as Record<string, string | undefined>;
      const problems: string[] = [];
      const mappings = MAPPABLE_FIELDS.flatMap((field) => {
        const chosen = body[`map_${field}`];
        if (!chosen) return [];
        const found = paths.get(chosen);
        if (!found) {
          problems.push(`The path chosen for ${field} is not in the sample.`);
          return [];
        }
        return [{ field_name: field, path: found.path, type: mappingType(field, found.kind) }];
      });
      if (problems.length > 0) return mappingPage(request, reply, integration, { mappingErrors: { _: problems.join(' ') } }, 400);
      try {
        await integrations.update(project, integration.id, { payload_attribute_mappings: mappings }, request.page.actor);
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return mappingPage(request, reply, integration, { mappingErrors: { _: Object.values(errors).join(' ') } }, 400);
      }
      return reply.redirectWithFlash(PAGES.mapping(project.full_path, integration.id), {
        kind: 'notice',
        text: mappings.length > 0 ? `Mapping saved: ${mappings.length} ${mappings.length === 1 ? 'field' : 'fields'}.` : 'Mapping cleared.',
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
