import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import { AppError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { sendPage } from '../../web/layout.js';
import type { IdentityModule } from '../identity/index.js';
import type { NamespaceRow, ProjectRow, ProjectsModule } from '../projects/index.js';
import { isLevel, type Level } from './notifications.levels.js';
import { notificationsPage, type SourceEntry } from './notifications.pages.js';
import type { NotificationsService, SettingInput } from './notifications.service.js';

export const NOTIFICATIONS_PAGE = '/-/profile/notifications';
const LIST_MAX = 100;
const page = { config: { policy: { auth: 'none' as const } } };

interface PageDeps {
  service: NotificationsService;
  identity: IdentityModule;
  projects: ProjectsModule;
}

function formOf(request: FastifyRequest): SettingInput {
  const body = request.body;
  if (!body || typeof body !== 'object') return {};
  const { level, notification_email } = body as Record<string, unknown>;
  return { ...(level !== undefined ? { level } : {}), ...(notification_email !== undefined ? { notification_email } : {}) };
}

function describe(error: AppError): string {
  if (error instanceof ValidationError) {
    return Object.entries(error.messages)
      .map(([field, messages]) => `${field.replace(/_/g, ' ')} ${Array.isArray(messages) ? messages.join(', ') : 'is invalid'}`)
      .join('; ')
      .replace(/^./, (c) => c.toUpperCase());
  }
  return error.message;
}

/** The notification settings page (`/-/profile/notifications`) and its three forms. */
export function notificationsPageRoutes(app: FastifyInstance, { service, identity, projects }: PageDeps): void {
  const { pageAuth, users } = identity;

  async function entries(actor: Actor, userId: number): Promise<{ groups: SourceEntry[]; projects: SourceEntry[] }> {
    const saved = await service.listSaved(userId);
    const levelOf = (kind: 'namespace' | 'project', id: number): Level => {
      const row = saved.find((s) => s.source_kind === kind && s.source_id === id);
      return row && isLevel(row.level) ? row.level : 'global';
    };
    const scope = await projects.access.projectScope(actor);
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
        groups.push({ kind: 'groups', id, name: group.full_path, level: levelOf('namespace', id) });
    }
    const inGroups = scope.namespaceIds.length
      ? (await projects.projects.list(actor, { namespaceIds: [...scope.namespaceIds], orderBy: 'path', sort: 'asc' }, LIST_MAX, 0)).rows
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
        list.push({ kind: 'projects', id, name: project.full_path, level: levelOf('project', id) });
    }
    return { groups: groups.sort((a, b) => a.name.localeCompare(b.name)), projects: list.sort((a, b) => a.name.localeCompare(b.name)) };
  }

  async function render(request: FastifyRequest, reply: FastifyReply, actor: Actor, status = 200, error?: string) {
    const user = await users.get(actor.user.id);
    const global = await service.getGlobal(user);
    const query = request.query as Record<string, unknown> | undefined;
    return sendPage(
      reply,
      notificationsPage({
        username: user.username,
        csrf: pageAuth.pageCsrf(request, reply),
        level: global.level,
        email: global.notification_email,
        primaryEmail: user.email,
        verifiedEmails: await service.verifiedEmails(user),
        ...(await entries(actor, user.id)),
        notice: status === 200 && query?.saved === '1' ? 'Notification settings saved.' : undefined,
        error,
      }),
      status,
    );
  }

  /** Runs a form's change: CSRF first, then the service; its errors re-render the page. */
  async function submit(request: FastifyRequest, reply: FastifyReply, change: (actor: Actor) => Promise<unknown>) {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return reply;
    if (!pageAuth.verifyPageCsrf(request)) return render(request, reply, actor, 422, 'Your session has expired. Please try again.');
    try {
      await change(actor);
    } catch (error) {
      if (error instanceof AppError && error.status < 500) return render(request, reply, actor, error.status, describe(error));
      throw error;
    }
    return reply.redirect(`${NOTIFICATIONS_PAGE}?saved=1`, 303);
  }

  app.get(NOTIFICATIONS_PAGE, page, async (request, reply) => {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return reply;
    return render(request, reply, actor);
  });

  app.post(NOTIFICATIONS_PAGE, page, (request, reply) =>
    submit(request, reply, async (actor) => service.updateGlobal(await users.get(actor.user.id), formOf(request))),
  );

  app.post<{ Params: { kind: string; id: string } }>(`${NOTIFICATIONS_PAGE}/:kind/:id`, page, (request, reply) =>
    submit(request, reply, async (actor) => {
      const id = /^\d{1,15}$/.test(request.params.id) ? Number(request.params.id) : -1;
      if (request.params.kind === 'groups') {
        const { group } = await projects.access.checkGroup(actor, await projects.groups.findById(id));
        return service.updateSource(actor.user.id, 'namespace', group.id, formOf(request));
      }
      if (request.params.kind === 'projects') {
        const { project } = await projects.access.checkProject(actor, await projects.projects.findById(id));
        return service.updateSource(actor.user.id, 'project', project.id, formOf(request));
      }
      throw new NotFoundError();
    }),
  );
}
