import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { Layout, RoleRequiredError, formErrorsOf, sendPage, type FieldErrors } from '../../web/index.js';
import { spamContextOf } from '../spam/index.js';
import { AccessLevel } from './access.policy.js';
import type { IssueRow } from './issues.repository.js';
import { parseDay } from './issues.service.js';
import { IssueList, IssuePage, NewIssueForm, issuePath, issuesPath, type IssueState } from './issues.views.js';
import type { NamespaceRow } from './namespaces.repository.js';
import { namespaceCrumbs } from './page-crumbs.service.js';
import type { ProjectsPagesDeps } from './projects.pages.js';
import type { ProjectRow } from './projects.repository.js';

const PER_PAGE = 20;
/** Comments a page of an issue shows, oldest first; longer discussions are paged. */
const NOTES_PER_PAGE = 100;
const MAX_NOTES_PAGE = 10_000;
const ProjectParams = Type.Object({ project: Type.String({ minLength: 1, maxLength: 1024 }) });
const IssueParams = Type.Object({ project: Type.String({ minLength: 1, maxLength: 1024 }), iid: Type.Integer({ minimum: 1 }) });
const IssueQuery = Type.Object({ notes_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_NOTES_PAGE })) });
const ListQuery = Type.Object({
  state: Type.Optional(Type.Union([Type.Literal('opened'), Type.Literal('closed'), Type.Literal('all')])),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
const IssueForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  title: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.String({ maxLength: 1_048_576 })),
});
const NoteForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  body: Type.String({ minLength: 1, maxLength: 1_000_000 }),
});
const ActionForm = Type.Object({ authenticity_token: Type.Optional(Type.String({ maxLength: 256 })) });
const SidebarForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  // Absent when a multiple select has nothing selected: the issue is then unassigned.
  assignee_ids: Type.Optional(Type.Array(Type.String({ maxLength: 20, pattern: '^[0-9]*$' }), { maxItems: 100 })),
  due_date: Type.Optional(Type.String({ maxLength: 32 })),
});
/** The most members the assignee select lists. */
const ASSIGNABLE_SHOWN = 100;

/**
 * A project's issues at `/<full_path>/-/issues` (rewritten to `/-/p/:project/issues`): the
 * list, a new issue, an issue with its comments, closing and reopening. The same rules as the
 * API: confidential issues for Reporters and their authors, closing for Reporters and the author.
 */
const notesPageQuery = (page: number) => (page > 1 ? `?notes_page=${page}` : '');

export function issuesPages(web: ApiApp, deps: ProjectsPagesDeps): void {
  const { issues, users, projects, members, extensions, platform } = deps;
  const multipleAssignees = platform.config.tier !== 'free';

  /** Who the issue page offers as assignees: active members of the project or a group above it (unexpired). */
  const assignable = async (project: ProjectRow) => {
    const ancestry = await projects.ancestry(project);
    const { rows } = await members.listEffective(
      { kind: 'project', id: project.id },
      ancestry.filter((n) => n.kind === 'group').map((n) => n.id),
      ASSIGNABLE_SHOWN,
      0,
    );
    const now = platform.clock.now();
    const ids = rows.filter((m) => m.expires_at === null || m.expires_at > now).map((m) => m.user_id);
    // A personal project's owner is its namespace's, not a member row.
    const namespace = ancestry[ancestry.length - 1];
    if (namespace?.kind === 'user' && namespace.owner_id !== null && !ids.includes(namespace.owner_id)) ids.unshift(namespace.owner_id);
    const byId = await users.mapByIds(ids);
    return [...new Set(ids)]
      .flatMap((id) => {
        const u = byId.get(id);
        return u && u.state === 'active' && u.bot === 0 ? [{ id: u.id, name: u.name, username: u.username }] : [];
      })
      .sort((a, b) => a.username.localeCompare(b.username));
  };

  const resolved = (request: FastifyRequest) => {
    const { row, level } = request.page.project!;
    return { project: row as ProjectRow, level };
  };

  const frame = async (
    request: FastifyRequest,
    project: ProjectRow,
    level: number,
    title: string,
    crumbs: { label: string; href?: string }[],
    body: preact.VNode,
  ) => {
    const namespace: NamespaceRow | undefined = await projects.namespaceOf(project);
    return (
      <Layout
        title={`${title} · ${project.name}`}
        page={request.page}
        crumbs={[
          ...(await namespaceCrumbs(deps, namespace, request.page.actor)),
          { label: project.name, href: `/${project.full_path}` },
          ...crumbs,
        ]}
        project={{ fullPath: project.full_path, name: project.name, level, current: 'issues' }}
      >
        {body}
      </Layout>
    );
  };

  /** The issue the caller may see; a visitor is sent to sign in first, as for a project. */
  const visibleIssue = async (request: FastifyRequest, project: ProjectRow, level: number, iid: number): Promise<IssueRow> => {
    const issue = await issues.find(project, iid, request.page.actor, level);
    if (issue) return issue;
    if (!request.page.actor) throw new UnauthorizedError();
    return issues.get(project, iid, request.page.actor, level);
  };

  const canClose = (request: FastifyRequest, issue: IssueRow, level: number) =>
    request.page.actor !== null && (level >= AccessLevel.REPORTER || issue.author_id === request.page.actor.user.id);

  const issuePage = async (
    request: FastifyRequest,
    iid: number,
    comment?: { input: Record<string, unknown>; errors: FieldErrors },
    notesPage = 1,
  ) => {
    const { project, level } = resolved(request);
    const issue = await visibleIssue(request, project, level, iid);
    const canPlan = request.page.actor !== null && level >= AccessLevel.REPORTER;
    const [notes, origins, assignees, members] = await Promise.all([
      issues.listNotes(issue, 'asc', NOTES_PER_PAGE, (notesPage - 1) * NOTES_PER_PAGE),
      extensions.issueOrigins(issue, project, level),
      issues.assigneesOf([issue.id]),
      canPlan ? assignable(project) : Promise.resolve([]),
    ]);
    const assigneeIds = assignees.get(issue.id) ?? [];
    const byId = await users.mapByIds([issue.author_id, issue.closed_by_id, ...assigneeIds, ...notes.rows.map((n) => n.author_id)]);
    return frame(
      request,
      project,
      level,
      issue.title,
      [{ label: 'Issues', href: issuesPath(project) }, { label: `#${issue.iid}` }],
      <IssuePage
        project={project}
        issue={issue}
        notes={notes.rows}
        notesPage={notesPage}
        notesPages={Math.max(1, Math.ceil(notes.total / NOTES_PER_PAGE))}
        users={byId}
        origins={origins}
        csrf={request.page.csrf}
        signedIn={request.page.actor !== null}
        canComment={request.page.actor !== null}
        canClose={canClose(request, issue, level)}
        assigneeIds={assigneeIds}
        today={new Date(platform.clock.now()).toISOString().slice(0, 10)}
        planning={canPlan ? { members, multiple: multipleAssignees } : undefined}
        {...(comment ? { comment } : {})}
      />,
    );
  };

  const newIssueForm = async (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) => {
    const { project, level } = resolved(request);
    return frame(
      request,
      project,
      level,
      'New issue',
      [{ label: 'Issues', href: issuesPath(project) }, { label: 'New' }],
      <NewIssueForm project={project} csrf={request.page.csrf} input={input} errors={errors} />,
    );
  };

  const commentForm = (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) =>
    issuePage(request, Number((request.params as { iid?: unknown }).iid), { input, errors });

  web.get(
    '/-/p/:project/issues',
    { schema: { params: ProjectParams, querystring: ListQuery }, config: { page: { signIn: 'optional', project: 0 } } },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const state: IssueState = request.query.state ?? 'opened';
      const search = request.query.search?.trim() ?? '';
      const page = request.query.page ?? 1;
      const base = {
        search: search || undefined,
        orderBy: 'created_at' as const,
        sort: 'desc' as const,
        includeConfidential: level >= AccessLevel.REPORTER,
        viewerId: request.page.actor?.user.id ?? null,
      };
      const [opened, closed, shown] = await Promise.all([
        issues.list(project, { ...base, state: 'opened' }, 1, 0),
        issues.list(project, { ...base, state: 'closed' }, 1, 0),
        issues.list(project, { ...base, state: state === 'all' ? undefined : state }, PER_PAGE, (page - 1) * PER_PAGE),
      ]);
      const [assignees, notes] = await Promise.all([
        issues.assigneesOf(shown.rows.map((i) => i.id)),
        issues.countNotes(shown.rows.map((i) => i.id)),
      ]);
      const byId = await users.mapByIds([...shown.rows.map((i) => i.author_id), ...[...assignees.values()].flat()]);
      return sendPage(
        reply,
        await frame(
          request,
          project,
          level,
          'Issues',
          [{ label: 'Issues' }],
          <IssueList
            project={project}
            state={state}
            search={search}
            counts={{ opened: opened.total, closed: closed.total, all: opened.total + closed.total }}
            issues={shown.rows}
            notes={notes}
            users={byId}
            assignees={assignees}
            today={new Date(platform.clock.now()).toISOString().slice(0, 10)}
            page={page}
            hasNext={page * PER_PAGE < shown.total}
            canCreate={request.page.actor !== null}
          />,
        ),
      );
    },
  );

  web.get(
    '/-/p/:project/issues/new',
    { schema: { params: ProjectParams }, config: { page: { signIn: 'required', project: 0 } } },
    async (request, reply) => sendPage(reply, await newIssueForm(request, {}, {})),
  );

  web.post(
    '/-/p/:project/issues',
    {
      schema: { params: ProjectParams, body: IssueForm },
      bodyLimit: 2 * 1024 * 1024,
      config: { page: { signIn: 'required', project: 0, form: newIssueForm } },
    },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const actor = request.page.actor!;
      const input = { title: request.body.title, description: request.body.description ?? '' };
      try {
        const issue = await issues.createFromUser(project, actor.user.id, level, input, spamContextOf(request, actor.user.id));
        return reply.redirectWithFlash(issuePath(project, issue.iid), { kind: 'notice', text: `Issue #${issue.iid} was created.` });
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await newIssueForm(request, request.body, errors), 400);
      }
    },
  );

  web.get(
    '/-/p/:project/issues/:iid',
    { schema: { params: IssueParams, querystring: IssueQuery }, config: { page: { signIn: 'optional', project: 0 } } },
    async (request, reply) => sendPage(reply, await issuePage(request, request.params.iid, undefined, request.query.notes_page ?? 1)),
  );

  web.post(
    '/-/p/:project/issues/:iid/notes',
    {
      schema: { params: IssueParams, body: NoteForm },
      bodyLimit: 2 * 1024 * 1024,
      config: { page: { signIn: 'required', project: 0, form: commentForm } },
    },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const actor = request.page.actor!;
      const issue = await issues.get(project, request.params.iid, actor, level);
      try {
        const note = await issues.addNoteFromUser(project, issue, actor.user.id, request.body.body, spamContextOf(request, actor.user.id));
        // The new comment is the newest: on the last page of the discussion.
        const { total } = await issues.listNotes(issue, 'asc', 1, 0);
        const last = Math.min(MAX_NOTES_PAGE, Math.ceil(total / NOTES_PER_PAGE));
        return reply.redirectWithFlash(`${issuePath(project, issue.iid)}${notesPageQuery(last)}#note-${note.id}`, {
          kind: 'notice',
          text: 'Your comment was added.',
        });
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await commentForm(request, request.body, errors), 400);
      }
    },
  );

  // Assignees and due date (Reporter and above, as the API): the form states the whole choice.
  web.post(
    '/-/p/:project/issues/:iid/sidebar',
    { schema: { params: IssueParams, body: SidebarForm }, config: { page: { signIn: 'required', project: 0 } } },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const actor = request.page.actor!;
      const issue = await issues.get(project, request.params.iid, actor, level);
      if (level < AccessLevel.REPORTER) throw new RoleRequiredError('Reporter');
      const here = issuePath(project, issue.iid);
      const wanted = [...new Set((request.body.assignee_ids ?? []).filter((v) => v !== '').map(Number))];
      const allowed = new Set((await assignable(project)).map((m) => m.id));
      if (wanted.some((id) => !allowed.has(id)) || (!multipleAssignees && wanted.length > 1)) {
        return reply.redirectWithFlash(here, { kind: 'error', text: 'Assignees must be members of the project.' });
      }
      const dueDate = request.body.due_date?.trim() ?? '';
      if (dueDate !== '' && parseDay(dueDate) === undefined) {
        return reply.redirectWithFlash(here, { kind: 'error', text: 'The due date is not a valid date (YYYY-MM-DD).' });
      }
      await issues.updateFromUser(
        project,
        issue,
        actor,
        level,
        { assignee_ids: wanted, due_date: dueDate },
        spamContextOf(request, actor.user.id),
      );
      return reply.redirectWithFlash(here, { kind: 'notice', text: 'Assignees and due date were saved.' });
    },
  );

  for (const [action, event, done] of [
    ['close', 'close', 'closed'],
    ['reopen', 'reopen', 'reopened'],
  ] as const) {
    web.post(
      `/-/p/:project/issues/:iid/${action}`,
      { schema: { params: IssueParams, body: ActionForm }, config: { page: { signIn: 'required', project: 0 } } },
      async (request, reply) => {
        const { project, level } = resolved(request);
        const actor = request.page.actor!;
        const issue = await issues.get(project, request.params.iid, actor, level);
        // The API's rule (its author or a Reporter), named on the refusal page.
        if (!canClose(request, issue, level)) throw new RoleRequiredError('Reporter');
        await issues.updateFromUser(project, issue, actor, level, { state_event: event }, spamContextOf(request, actor.user.id));
        return reply.redirectWithFlash(issuePath(project, issue.iid), { kind: 'notice', text: `Issue #${issue.iid} was ${done}.` });
      },
    );
  }
}
