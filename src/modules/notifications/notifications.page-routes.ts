import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import { AppError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { fieldErrorsOf, sendPage, type FieldErrors } from '../../web/index.js';
import type { IdentityModule } from '../identity/index.js';
import type { NamespaceRow, ProjectRow, ProjectsModule } from '../projects/index.js';
import { ALL_EVENTS, isLevel, type Level, type NotificationEvent } from './notifications.levels.js';
import { notificationsPage, type SourceEntry } from './notifications.pages.js';
import type { NotificationsService, SettingInput } from './notifications.service.js';

export const NOTIFICATIONS_PAGE = '/-/profile/notifications';
const LIST_MAX = 100;

interface PageDeps {
  service: NotificationsService;
  /** Whether SMTP is configured (the page says when it is not). */
  mailEnabled: boolean;
  identity: IdentityModule;
  projects: ProjectsModule;
}

const SettingForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  level: Type.Optional(Type.String({ maxLength: 64 })),
  notification_email: Type.Optional(Type.String({ maxLength: 255 })),
  // The Custom events' checkboxes came with the form: an unticked one is saved as off.
  custom_events: Type.Optional(Type.String({ maxLength: 8 })),
  ...Object.fromEntries(ALL_EVENTS.map((event) => [event, Type.Optional(Type.String({ maxLength: 8 }))])),
});
// Any kind and id reach the handler, which answers 404 for what it does not know (as before the page layer).
const SourceParams = Type.Object({ kind: Type.String({ maxLength: 32 }), id: Type.String({ maxLength: 32 }) });

/** The form as the service takes it; `events`: the Custom events the form showed (its kind's). */
function formOf(body: unknown, events: readonly NotificationEvent[] = []): SettingInput {
  if (!body || typeof body !== 'object') return {};
  const fields = body as Record<string, unknown>;
  const { level, notification_email } = fields;
  const input: SettingInput = {
    ...(level !== undefined ? { level } : {}),
    ...(notification_email !== undefined ? { notification_email } : {}),
  };
  if (fields.custom_events !== undefined) for (const event of events) input[event] = fields[event] === 'true';
  return input;
}

/** A service refusal as the page shows it: beside the global form's field, or above the forms. */
function errorsOf(error: AppError): FieldErrors {
  if (error instanceof ValidationError) return fieldErrorsOf(error);
  return { _: error.message.replace(/^\d{3} /, '').replace(/^./, (c) => c.toUpperCase()) };
}

/**
 * The notification settings page (`/-/profile/notifications`) and its forms, on the page
 * layer: the global level and email, and a level per group and project the user belongs to.
 */
export function notificationsPages(web: ApiApp, { service, identity, projects, mailEnabled }: PageDeps): void {
  const { users } = identity;

  async function entries(actor: Actor, userId: number): Promise<{ groups: SourceEntry[]; projects: SourceEntry[] }> {
    const saved = await service.listSaved(userId);
    const levelOf = (kind: 'namespace' | 'project', id: number): Level => {
      const row = saved.find((s) => s.source_kind === kind && s.source_id === id);
      return row && isLevel(row.level) ? row.level : 'global';
    };
    // The groups and projects the user belongs to: for an administrator too, who may see every
    // project but is listed only what they are a member of (an unrestricted scope named none).
    const member: Actor = actor.user.isAdmin ? { ...actor, user: { ...actor.user, isAdmin: false } } : actor;
    const scope = await projects.access.projectScope(member);
    const eventsOf = (kind: 'namespace' | 'project', id: number) => {
      const row = saved.find((s) => s.source_kind === kind && s.source_id === id);
      return service.eventsOf(kind).map((name) => ({ name, on: service.eventOn(row, name) }));
    };
    // A saved setting outlives the membership that let the user see its source: list it only while
    // the source is still visible (the page would otherwise name a private project or group).
    const { access } = projects;
    const seesGroup = async (group: NamespaceRow) => access.canSee(actor, group.visibility, await access.namespaceLevel(actor, group));
    const seesProject = async (project: ProjectRow) => access.canSee(actor, project.visibility, await access.projectLevel(actor, project));
    const groupIds = [...new Set([...scope.namespaceIds, ...saved.filter((s) => s.source_kind === 'namespace').map((s) => s.source_id)])];
    const groups: SourceEntry[] = [];
    for (const id of groupIds.slice(0, LIST_MAX)) {
      const group = await projects.groups.findById(id);
      if (group?.kind === 'group' && (scope.namespaceIds.includes(id) || (await seesGroup(group))))
        groups.push({ kind: 'groups', id, name: group.full_path, level: levelOf('namespace', id), events: eventsOf('namespace', id) });
    }
    const inGroups = scope.namespaceIds.length
      ? (await projects.projects.list(member, { namespaceIds: [...scope.namespaceIds], orderBy: 'path', sort: 'asc' }, LIST_MAX, 0)).rows
      : [];
    const projectIds = [
      ...new Set([
        ...inGroups.map((p) => p.id),
        ...scope.projectIds,
        ...saved.filter((s) => s.source_kind === 'project').map((s) => s.source_id),
      ]),
    ];
    const list: SourceEntry[] = [];
    for (const id of projectIds.slice(0, LIST_MAX)) {
      const listed = inGroups.find((p) => p.id === id);
      const project = listed ?? (await projects.projects.findById(id));
      // Projects of the list query and of the user's memberships are visible already; the others are checked.
      if (project && (listed || scope.projectIds.includes(id) || (await seesProject(project))))
        list.push({ kind: 'projects', id, name: project.full_path, level: levelOf('project', id), events: eventsOf('project', id) });
    }
    return { groups: groups.sort((a, b) => a.name.localeCompare(b.name)), projects: list.sort((a, b) => a.name.localeCompare(b.name)) };
  }

  async function render(request: FastifyRequest, errors: FieldErrors, input?: SettingInput) {
    const actor = request.page.actor!;
    const user = await users.get(actor.user.id);
    const global = await service.getGlobal(user);
    const typedLevel = input?.level;
    const typedEmail = input?.notification_email;
    return notificationsPage({
      page: request.page,
      level: typeof typedLevel === 'string' && isLevel(typedLevel) ? typedLevel : global.level,
      events: service.eventsOf('global').map((name) => ({
        name,
        on: typeof input?.[name] === 'boolean' ? input[name] : (global.events[name] ?? service.eventOn(undefined, name)),
      })),
      mailEnabled,
      email: typeof typedEmail === 'string' ? typedEmail : global.notification_email,
      primaryEmail: user.email,
      verifiedEmails: await service.verifiedEmails(user),
      ...(await entries(actor, user.id)),
      errors,
    });
  }
  const form = (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) =>
    // A row form's own field has no place beside the global form: its message goes above.
    render(request, request.url.startsWith(`${NOTIFICATIONS_PAGE}/`) ? { _: Object.values(errors).join('; ') } : errors, formOf(input));

  /** Runs a form's change; a refusal draws the page again with its message, at the refusal's status. */
  const submit =
    (change: (request: FastifyRequest, actor: Actor) => Promise<unknown>) =>
    async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
      try {
        await change(request, request.page.actor!);
      } catch (error) {
        if (error instanceof AppError && error.status < 500 && error.status !== 404)
          return sendPage(reply, await render(request, errorsOf(error), formOf(request.body)), error.status);
        throw error;
      }
      return reply.redirectWithFlash(NOTIFICATIONS_PAGE, { kind: 'notice', text: 'Notification settings saved.' });
    };
  const page = { signIn: 'required', form } as const;

  web.get(NOTIFICATIONS_PAGE, { config: { page: { signIn: 'required' } } }, async (request, reply) =>
    sendPage(reply, await render(request, {})),
  );

  web.post(
    NOTIFICATIONS_PAGE,
    { schema: { body: SettingForm }, config: { page } },
    submit(async (request, actor) =>
      service.updateGlobal(await users.get(actor.user.id), formOf(request.body, service.eventsOf('global'))),
    ),
  );

  web.post(
    `${NOTIFICATIONS_PAGE}/:kind/:id`,
    { schema: { params: SourceParams, body: SettingForm }, config: { page } },
    submit(async (request, actor) => {
      const params = request.params as { kind: string; id: string };
      const id = /^\d{1,15}$/.test(params.id) ? Number(params.id) : -1;
      if (params.kind === 'groups') {
        const { group } = await projects.access.checkGroup(actor, await projects.groups.findById(id));
        return service.updateSource(actor.user.id, 'namespace', group.id, formOf(request.body, service.eventsOf('namespace')));
      }
      if (params.kind === 'projects') {
        const { project } = await projects.access.checkProject(actor, await projects.projects.findById(id));
        return service.updateSource(actor.user.id, 'project', project.id, formOf(request.body, service.eventsOf('project')));
      }
      throw new NotFoundError();
    }),
  );
}
