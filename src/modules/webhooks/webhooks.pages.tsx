import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { NotFoundError } from '../../infra/errors/index.js';
import { IntegerId, type ApiApp } from '../../infra/http/index.js';
import { Layout, ROLE, formErrorsOf, sendPage, type Crumb, type FieldErrors } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import { alertStatus } from './failure.rules.js';
import type { HookOwner, HookRow } from './hooks.repository.js';
import { TRIGGERS, type Trigger } from './payloads.rules.js';
import type { WebhooksDeps } from './webhooks.deps.js';
import type { HookInput } from './webhooks.schemas.js';
import { HOOK_PAGES, HookEdit, HookLogDetail, HooksList, TRIGGER_LABELS } from './webhooks.views.js';

const ProjectRef = Type.String({ minLength: 1, maxLength: 1024 });
const ProjectParams = Type.Object({ project: ProjectRef });
const HookParams = Type.Object({ project: ProjectRef, hook_id: IntegerId });
const TestParams = Type.Object({ project: ProjectRef, hook_id: IntegerId, trigger: Type.Union(TRIGGERS.map((t) => Type.Literal(t))) });
const LogParams = Type.Object({ project: ProjectRef, hook_id: IntegerId, log_id: IntegerId });
const Token = Type.Optional(Type.String({ maxLength: 256 }));
const Box = Type.Optional(Type.String({ maxLength: 8 }));
const HookFormBody = Type.Object({
  authenticity_token: Token,
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  description: Type.Optional(Type.String({ maxLength: 2048 })),
  token: Type.Optional(Type.String({ maxLength: 255 })),
  push_events: Box,
  tag_push_events: Box,
  issues_events: Box,
  confidential_issues_events: Box,
  note_events: Box,
  confidential_note_events: Box,
  enable_ssl_verification: Box,
  push_events_branch_filter: Type.Optional(Type.String({ maxLength: 4096 })),
  branch_filter_strategy: Type.Optional(Type.Union([Type.Literal('wildcard'), Type.Literal('regex'), Type.Literal('all_branches')])),
});
type HookForm = typeof HookFormBody.static;
const EmptyForm = Type.Object({ authenticity_token: Token });

/** A submitted form as the service takes it: an unchecked box is false, an empty token keeps the current one. */
function inputOf(form: HookForm): HookInput & { url: string } {
  const box = (value: string | undefined) => value !== undefined && value !== '' && value !== '0';
  return {
    url: form.url.trim(),
    name: form.name?.trim() ?? '',
    description: form.description?.trim() ?? '',
    ...(form.token ? { token: form.token } : {}),
    push_events: box(form.push_events),
    tag_push_events: box(form.tag_push_events),
    issues_events: box(form.issues_events),
    confidential_issues_events: box(form.confidential_issues_events),
    note_events: box(form.note_events),
    confidential_note_events: box(form.confidential_note_events),
    enable_ssl_verification: box(form.enable_ssl_verification),
    push_events_branch_filter: form.push_events_branch_filter?.trim() ?? '',
    branch_filter_strategy: form.branch_filter_strategy ?? 'wildcard',
  };
}

const rowValues = (row: HookRow): Record<string, unknown> => ({ ...row, token: '' });

/**
 * Settings > Webhooks at `/<full_path>/-/hooks` (Maintainer and above, as the API): the hooks with
 * their test buttons, the form to add one, each hook's edit page with its recent deliveries, and
 * one delivery's request and response.
 */
export function webhooksPages(web: ApiApp, deps: WebhooksDeps): void {
  const { hooks, deliveries, samples, platform } = deps;
  const page = { signIn: 'required', project: ROLE.maintainer } as const;

  const resolved = (request: FastifyRequest) => {
    const { row, level } = request.page.project!;
    const project = row as ProjectRow;
    const owner: HookOwner = { kind: 'project', id: project.id };
    return { project, level, owner };
  };

  const frame = async (request: FastifyRequest, title: string, crumbs: Crumb[], body: preact.VNode) => {
    const { project, level } = resolved(request);
    const trail = await deps.trail(project, request.page.actor);
    return (
      <Layout
        title={`${title} · ${project.name}`}
        page={request.page}
        crumbs={[...trail, { label: project.name, href: `/${project.full_path}` }, { label: 'Settings' }, ...crumbs]}
        project={{ fullPath: project.full_path, name: project.name, level, current: 'webhooks' }}
      >
        {body}
      </Layout>
    );
  };

  const listPage = async (request: FastifyRequest, create: { values: Record<string, unknown>; errors: FieldErrors } | null = null) => {
    const { project, owner } = resolved(request);
    const now = platform.clock.now();
    const rows = await hooks.list(owner);
    return frame(
      request,
      'Webhooks',
      [{ label: 'Webhooks' }],
      <HooksList
        fullPath={project.full_path}
        hooks={rows.map((row) => ({ row, status: alertStatus(row, now), disabledUntil: row.disabled_until }))}
        csrf={request.page.csrf}
        create={create}
      />,
    );
  };

  const editPage = async (
    request: FastifyRequest,
    hookId: number,
    state: { values: Record<string, unknown>; errors: FieldErrors } | null = null,
  ) => {
    const { project, owner } = resolved(request);
    const row = await hooks.get(owner, hookId);
    const logs = await hooks.logs(row);
    return frame(
      request,
      'Edit webhook',
      [{ label: 'Webhooks', href: HOOK_PAGES.list(project.full_path) }, { label: 'Edit' }],
      <HookEdit
        fullPath={project.full_path}
        row={row}
        status={alertStatus(row, platform.clock.now())}
        logs={logs}
        csrf={request.page.csrf}
        values={state?.values ?? rowValues(row)}
        errors={state?.errors ?? null}
      />,
    );
  };

  const createForm = async (request: FastifyRequest, values: Record<string, unknown>, errors: FieldErrors) =>
    listPage(request, { values: { ...values, token: '' }, errors });
  const editForm = async (request: FastifyRequest, values: Record<string, unknown>, errors: FieldErrors) =>
    editPage(request, Number((request.params as { hook_id?: unknown }).hook_id), { values: { ...values, token: '' }, errors });

  web.get('/-/p/:project/hooks', { schema: { params: ProjectParams }, config: { page } }, async (request, reply) =>
    sendPage(reply, await listPage(request)),
  );

  web.post(
    '/-/p/:project/hooks',
    { schema: { params: ProjectParams, body: HookFormBody }, bodyLimit: 64 * 1024, config: { page: { ...page, form: createForm } } },
    async (request, reply) => {
      const { project, owner } = resolved(request);
      try {
        await hooks.create(owner, inputOf(request.body));
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await createForm(request, request.body, errors), 400);
      }
      return reply.redirectWithFlash(HOOK_PAGES.list(project.full_path), { kind: 'notice', text: 'Webhook was created.' });
    },
  );

  web.get('/-/p/:project/hooks/:hook_id/edit', { schema: { params: HookParams }, config: { page } }, async (request, reply) =>
    sendPage(reply, await editPage(request, request.params.hook_id)),
  );

  web.post(
    '/-/p/:project/hooks/:hook_id',
    { schema: { params: HookParams, body: HookFormBody }, bodyLimit: 64 * 1024, config: { page: { ...page, form: editForm } } },
    async (request, reply) => {
      const { project, owner } = resolved(request);
      try {
        await hooks.update(owner, request.params.hook_id, inputOf(request.body));
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await editForm(request, request.body, errors), 400);
      }
      return reply.redirectWithFlash(HOOK_PAGES.edit(project.full_path, request.params.hook_id), {
        kind: 'notice',
        text: 'Webhook was updated.',
      });
    },
  );

  web.post(
    '/-/p/:project/hooks/:hook_id/destroy',
    { schema: { params: HookParams, body: EmptyForm }, bodyLimit: 16 * 1024, config: { page } },
    async (request, reply) => {
      const { project, owner } = resolved(request);
      await hooks.remove(owner, request.params.hook_id);
      return reply.redirectWithFlash(HOOK_PAGES.list(project.full_path), { kind: 'notice', text: 'Webhook was deleted.' });
    },
  );

  web.post(
    '/-/p/:project/hooks/:hook_id/test/:trigger',
    { schema: { params: TestParams, body: EmptyForm }, bodyLimit: 16 * 1024, config: { page } },
    async (request, reply) => {
      const { project, owner } = resolved(request);
      const hook = await hooks.get(owner, request.params.hook_id);
      const actor = request.page.actor;
      if (!actor) throw new NotFoundError();
      const trigger: Trigger = request.params.trigger;
      const back = HOOK_PAGES.list(project.full_path);
      let text: string;
      let kind: 'notice' | 'error' = 'notice';
      try {
        const outcome = await deliveries.test(hook, await samples.build(project, trigger, actor));
        if (outcome.ok) text = `Hook executed successfully: HTTP ${outcome.status} (${TRIGGER_LABELS[trigger]}).`;
        else {
          kind = 'error';
          text = `Hook execution failed: ${outcome.error}`;
        }
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        kind = 'error';
        text = errors._ ?? Object.values(errors)[0] ?? 'The test could not be sent.';
      }
      return reply.redirectWithFlash(back, { kind, text });
    },
  );

  web.get('/-/p/:project/hooks/:hook_id/hook_logs/:log_id', { schema: { params: LogParams }, config: { page } }, async (request, reply) => {
    const { project, owner } = resolved(request);
    const row = await hooks.get(owner, request.params.hook_id);
    const log = (await hooks.logs(row, 100)).find((l) => l.id === request.params.log_id);
    if (!log) throw new NotFoundError();
    return sendPage(
      reply,
      await frame(
        request,
        'Webhook request',
        [
          { label: 'Webhooks', href: HOOK_PAGES.list(project.full_path) },
          { label: 'Edit', href: HOOK_PAGES.edit(project.full_path, row.id) },
          { label: 'Request details' },
        ],
        <HookLogDetail log={log} />,
      ),
    );
  });
}
