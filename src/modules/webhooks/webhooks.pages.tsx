import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import type { RateLimit } from '../../config/index.js';
import { NotFoundError, TooManyRequestsError } from '../../infra/errors/index.js';
import { IntegerId, type ApiApp } from '../../infra/http/index.js';
import {
  Layout,
  ROLE,
  formErrorsOf,
  sendPage,
  type Crumb,
  type FieldErrors,
  type FlashMessage as Flash,
  type PagePolicy,
} from '../../web/index.js';
import type { NamespaceRow, ProjectRow } from '../projects/index.js';
import { alertStatus } from './failure.rules.js';
import type { HookOwner, HookRow } from './hooks.repository.js';
import { TRIGGERS, type Trigger } from './payloads.rules.js';
import { WEB_HOOK_TEST_LIMIT, webHookTestKey } from './webhooks.limits.js';
import type { WebhooksDeps } from './webhooks.deps.js';
import type { HookInput } from './webhooks.schemas.js';
import { HOOK_PAGES, HookEdit, HookLogDetail, HooksList, TRIGGER_LABELS, type HookOwnerWord } from './webhooks.views.js';

const Ref = Type.String({ minLength: 1, maxLength: 1024 });
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

/** A hooks page's owner as the page knows it: whose hooks, at which address, in which frame. */
interface OwnerPage {
  owner: HookOwner;
  /** The list's address (`/<full_path>/-/hooks`, `/groups/<full_path>/-/hooks`). */
  base: string;
  word: HookOwnerWord;
  frame: (title: string, crumbs: Crumb[], body: preact.VNode, flash?: Flash) => Promise<preact.VNode>;
  /** The project a test delivery speaks of. */
  project: (actor: Actor) => Promise<ProjectRow>;
}

/** One owner kind's pages: the internal address's parameter, its policy and how a request finds the owner. */
interface OwnerPages {
  param: 'project' | 'group';
  policy: PagePolicy;
  resolve(request: FastifyRequest): OwnerPage;
}

/** The message of a refused test: how many the limit allows and when the next may be sent. */
export function testLimitMessage(limit: RateLimit, error: TooManyRequestsError): string {
  const seconds = Number(error.headers['retry-after'] ?? limit.periodSeconds);
  const per = limit.periodSeconds === 60 ? 'a minute' : `every ${limit.periodSeconds} seconds`;
  return `Too many tests: a hook can be tested ${limit.count} times ${per}. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
}

/**
 * Settings > Webhooks at `/<full_path>/-/hooks` (Maintainer and above, as the API) and a group's
 * at `/groups/<full_path>/-/hooks` (Owner, Premium and Ultimate, as the API): the hooks with their
 * test buttons, the form to add one, each hook's edit page with its recent deliveries, and one
 * delivery's request and response. Tests count against the `web_hook_test` limit with the API's.
 */
export function webhooksPages(web: ApiApp, deps: WebhooksDeps): void {
  const { platform } = deps;
  const projectPages: OwnerPages = {
    param: 'project',
    policy: { signIn: 'required', project: ROLE.maintainer },
    resolve: (request) => {
      const { row, level } = request.page.project!;
      const project = row as ProjectRow;
      return {
        owner: { kind: 'project', id: project.id },
        base: HOOK_PAGES.project(project.full_path),
        word: 'project',
        project: () => Promise.resolve(project),
        frame: async (title, crumbs, body, flash) => {
          const trail = await deps.trail(project, request.page.actor, request);
          return (
            <Layout
              title={`${title} · ${project.name}`}
              page={flash ? { ...request.page, flash } : request.page}
              crumbs={[...trail, { label: project.name, href: `/${project.full_path}` }, { label: 'Settings' }, ...crumbs]}
              project={{ fullPath: project.full_path, name: project.name, level, current: 'webhooks' }}
            >
              {body}
            </Layout>
          );
        },
      };
    },
  };
  ownerPages(web, deps, projectPages);
  // Group hooks are a Premium and Ultimate feature: on Free their pages do not exist, as the API's.
  if (platform.config.tier === 'free') return;
  const groupPages: OwnerPages = {
    param: 'group',
    policy: { signIn: 'required', group: ROLE.owner },
    resolve: (request) => {
      const group = request.page.group!.row as NamespaceRow;
      return {
        owner: { kind: 'group', id: group.id },
        base: HOOK_PAGES.group(group.full_path),
        word: 'group',
        project: (actor) => deps.samples.groupProject(group, actor),
        frame: async (title, crumbs, body, flash) => {
          const trail = await deps.groupTrail(group, request.page.actor);
          return (
            <Layout
              title={`${title} · ${group.name}`}
              page={flash ? { ...request.page, flash } : request.page}
              crumbs={[...trail, { label: 'Settings' }, ...crumbs]}
            >
              {body}
            </Layout>
          );
        },
      };
    },
  };
  ownerPages(web, deps, groupPages);
}

function ownerPages(web: ApiApp, deps: WebhooksDeps, o: OwnerPages): void {
  const { hooks, deliveries, samples, platform } = deps;
  const page = o.policy;
  const prefix = o.param === 'project' ? '/-/p/:project/hooks' : '/-/g/:group/hooks';
  const OwnerParams = Type.Object({ [o.param]: Ref });
  const HookParams = Type.Object({ [o.param]: Ref, hook_id: IntegerId });
  const TestParams = Type.Object({ [o.param]: Ref, hook_id: IntegerId, trigger: Type.Union(TRIGGERS.map((t) => Type.Literal(t))) });
  const LogParams = Type.Object({ [o.param]: Ref, hook_id: IntegerId, log_id: IntegerId });
  const hookIdOf = (request: FastifyRequest) => (request.params as { hook_id: number }).hook_id;

  const listPage = async (
    request: FastifyRequest,
    create: { values: Record<string, unknown>; errors: FieldErrors } | null = null,
    flash?: Flash,
  ) => {
    const { owner, base, word, frame } = o.resolve(request);
    const now = platform.clock.now();
    const rows = await hooks.list(owner);
    return frame(
      'Webhooks',
      [{ label: 'Webhooks' }],
      <HooksList
        base={base}
        word={word}
        hooks={rows.map((row) => ({ row, status: alertStatus(row, now), disabledUntil: row.disabled_until }))}
        csrf={request.page.csrf}
        create={create}
      />,
      flash,
    );
  };

  const editPage = async (
    request: FastifyRequest,
    hookId: number,
    state: { values: Record<string, unknown>; errors: FieldErrors } | null = null,
  ) => {
    const { owner, base, frame } = o.resolve(request);
    const row = await hooks.get(owner, hookId);
    const logs = await hooks.logs(row);
    return frame(
      'Edit webhook',
      [{ label: 'Webhooks', href: HOOK_PAGES.list(base) }, { label: 'Edit' }],
      <HookEdit
        base={base}
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
    editPage(request, hookIdOf(request), { values: { ...values, token: '' }, errors });

  web.get(prefix, { schema: { params: OwnerParams }, config: { page } }, async (request, reply) =>
    sendPage(reply, await listPage(request)),
  );

  web.post(
    prefix,
    { schema: { params: OwnerParams, body: HookFormBody }, bodyLimit: 64 * 1024, config: { page: { ...page, form: createForm } } },
    async (request, reply) => {
      const { owner, base } = o.resolve(request);
      try {
        await hooks.create(owner, inputOf(request.body));
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await createForm(request, request.body, errors), 400);
      }
      return reply.redirectWithFlash(HOOK_PAGES.list(base), { kind: 'notice', text: 'Webhook was created.' });
    },
  );

  web.get(`${prefix}/:hook_id/edit`, { schema: { params: HookParams }, config: { page } }, async (request, reply) =>
    sendPage(reply, await editPage(request, hookIdOf(request))),
  );

  web.post(
    `${prefix}/:hook_id`,
    { schema: { params: HookParams, body: HookFormBody }, bodyLimit: 64 * 1024, config: { page: { ...page, form: editForm } } },
    async (request, reply) => {
      const { owner, base } = o.resolve(request);
      const hookId = hookIdOf(request);
      try {
        await hooks.update(owner, hookId, inputOf(request.body));
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await editForm(request, request.body, errors), 400);
      }
      return reply.redirectWithFlash(HOOK_PAGES.edit(base, hookId), { kind: 'notice', text: 'Webhook was updated.' });
    },
  );

  web.post(
    `${prefix}/:hook_id/destroy`,
    { schema: { params: HookParams, body: EmptyForm }, bodyLimit: 16 * 1024, config: { page } },
    async (request, reply) => {
      const { owner, base } = o.resolve(request);
      await hooks.remove(owner, hookIdOf(request));
      return reply.redirectWithFlash(HOOK_PAGES.list(base), { kind: 'notice', text: 'Webhook was deleted.' });
    },
  );

  web.post(
    `${prefix}/:hook_id/test/:trigger`,
    { schema: { params: TestParams, body: EmptyForm }, bodyLimit: 16 * 1024, config: { page } },
    async (request, reply) => {
      const resolved = o.resolve(request);
      const hook = await hooks.get(resolved.owner, hookIdOf(request));
      const actor = request.page.actor;
      if (!actor) throw new NotFoundError();
      const limit = platform.config.rateLimits.web_hook_test;
      try {
        await platform.limiter.enforce(WEB_HOOK_TEST_LIMIT, webHookTestKey(hook, actor), limit);
      } catch (error) {
        if (!(error instanceof TooManyRequestsError) || !limit) throw error;
        // The list again, with the refusal said where the flash goes, and the limit's headers.
        reply.headers(error.headers);
        return sendPage(reply, await listPage(request, null, { kind: 'error', text: testLimitMessage(limit, error) }), 429);
      }
      const trigger = (request.params as { trigger: Trigger }).trigger;
      let text: string;
      let kind: 'notice' | 'error' = 'notice';
      try {
        const outcome = await deliveries.test(hook, await samples.build(await resolved.project(actor), trigger, actor));
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
      return reply.redirectWithFlash(HOOK_PAGES.list(resolved.base), { kind, text });
    },
  );

  web.get(`${prefix}/:hook_id/hook_logs/:log_id`, { schema: { params: LogParams }, config: { page } }, async (request, reply) => {
    const { owner, base, frame } = o.resolve(request);
    const row = await hooks.get(owner, hookIdOf(request));
    const logId = (request.params as { log_id: number }).log_id;
    const log = (await hooks.logs(row, 100)).find((l) => l.id === logId);
    if (!log) throw new NotFoundError();
    return sendPage(
      reply,
      await frame(
        'Webhook request',
        [
          { label: 'Webhooks', href: HOOK_PAGES.list(base) },
          { label: 'Edit', href: HOOK_PAGES.edit(base, row.id) },
          { label: 'Request details' },
        ],
        <HookLogDetail log={log} />,
      ),
    );
  });
}
