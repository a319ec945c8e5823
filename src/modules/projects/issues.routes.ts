import { Type } from '@sinclair/typebox';
import { requireActor } from '../../infra/auth/index.js';
import { BadRequestError } from '../../infra/errors/index.js';
import { checkUnmodifiedSince, pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { spamContextOf } from '../spam/index.js';
import { AccessLevel } from './access.policy.js';
import type { IssueRow } from './issues.repository.js';
import { dueFilterOf } from './issues.service.js';
import type { ProjectRow } from './projects.repository.js';
import { mapIssue, mapNote } from './projects.presenter.js';
import * as I from './issues.schemas.js';
import * as S from './projects.schemas.js';
import type { ProjectsRouteDeps } from './projects.deps.js';

export function issuesRoutes(app: ApiApp, deps: ProjectsRouteDeps): void {
  const { platform, lookup, issues, users } = deps;
  const base = platform.config.externalUrl;
  const tags = ['issues'];

  /** One issue with its comment count, assignees and the users it names. */
  const present = async (issue: IssueRow, project: ProjectRow) => {
    const [notes, assignees] = await Promise.all([issues.countNotes([issue.id]), issues.assigneesOf([issue.id])]);
    const assigneeIds = assignees.get(issue.id) ?? [];
    const byId = await users.mapByIds([issue.author_id, issue.closed_by_id, ...assigneeIds]);
    return mapIssue(issue, project, base, byId, notes.get(issue.id) ?? 0, assigneeIds);
  };

  app.post(
    '/projects/:id/issues',
    {
      schema: { summary: 'Opens an issue in a project', tags, params: S.RefParams, body: S.CreateIssueBody, response: { 201: I.Issue } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const { project, level } = await lookup.project(request, request.params.id);
      const issue = await issues.createFromUser(project, actor.user.id, level, request.body, spamContextOf(request, actor.user.id));
      return reply.code(201).send(await present(issue, project));
    },
  );

  app.get(
    '/projects/:id/issues',
    {
      schema: {
        summary: 'Lists the issues of a project the caller may see',
        tags,
        params: S.RefParams,
        querystring: S.ListIssuesQuery,
        response: { 200: I.IssueList },
      },
      config: { policy: { auth: 'optional' } },
    },
    async (request, reply) => {
      const { project, level } = await lookup.project(request, request.params.id);
      const q = request.query;
      const page = pageOf(q);
      if (q.assignee_id !== undefined && q.assignee_username !== undefined)
        throw new BadRequestError('assignee_id, assignee_username are mutually exclusive');
      let assignee: number | 'none' | 'any' | undefined;
      const assigneeAll: number[] = [];
      if (q.assignee_id !== undefined) {
        const lower = q.assignee_id.toLowerCase();
        assignee = lower === 'none' ? 'none' : lower === 'any' ? 'any' : Number(q.assignee_id);
      }
      for (const username of q.assignee_username ?? []) {
        // An unknown username matches no issue (id 0 is nobody's).
        assigneeAll.push((await users.findByUsername(username))?.id ?? 0);
      }
      const { rows, total } = await issues.list(
        project,
        {
          state: q.state === 'all' ? undefined : q.state,
          search: q.search,
          issueType: q.issue_type,
          authorId: q.author_id,
          iids: q.iids,
          assignee,
          assigneeAll,
          due: dueFilterOf(q.due_date, platform.clock.now()),
          orderBy: q.order_by ?? 'created_at',
          sort: q.sort ?? 'desc',
          includeConfidential: level >= AccessLevel.REPORTER,
          viewerId: request.actor?.user.id ?? null,
        },
        page.limit,
        page.offset,
      );
      const [notes, assignees] = await Promise.all([issues.countNotes(rows.map((i) => i.id)), issues.assigneesOf(rows.map((i) => i.id))]);
      const byId = await users.mapByIds(rows.flatMap((i) => [i.author_id, i.closed_by_id, ...(assignees.get(i.id) ?? [])]));
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((i) => mapIssue(i, project, base, byId, notes.get(i.id) ?? 0, assignees.get(i.id)));
    },
  );

  app.get(
    '/projects/:id/issues/:issue_iid',
    {
      schema: { summary: 'Shows an issue', tags, params: S.IssueParams, response: { 200: I.Issue } },
      config: { policy: { auth: 'optional' } },
    },
    async (request) => {
      const { project, level } = await lookup.project(request, request.params.id);
      const issue = await issues.get(project, request.params.issue_iid, request.actor, level);
      return present(issue, project);
    },
  );

  app.put(
    '/projects/:id/issues/:issue_iid',
    {
      schema: {
        summary: 'Changes an issue, or closes or reopens it',
        tags,
        params: S.IssueParams,
        body: S.UpdateIssueBody,
        response: { 200: I.Issue },
      },
      config: { policy: { auth: 'required' } },
    },
    async (request) => {
      const actor = requireActor(request);
      const { project, level } = await lookup.project(request, request.params.id);
      const issue = await issues.get(project, request.params.issue_iid, actor, level);
      const updated = await issues.updateFromUser(project, issue, actor, level, request.body, spamContextOf(request, actor.user.id));
      return present(updated, project);
    },
  );

  app.delete(
    '/projects/:id/issues/:issue_iid',
    {
      schema: { summary: 'Deletes an issue', tags, params: S.IssueParams, response: { 204: Type.Null() } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const { project, level } = await lookup.project(request, request.params.id, AccessLevel.OWNER);
      const issue = await issues.get(project, request.params.issue_iid, request.actor, level);
      checkUnmodifiedSince(request, issue.updated_at);
      await issues.remove(issue);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/projects/:id/issues/:issue_iid/notes',
    {
      schema: { summary: 'Comments on an issue', tags, params: S.IssueParams, body: S.NoteBody, response: { 201: I.Note } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const { project, level } = await lookup.project(request, request.params.id);
      const issue = await issues.get(project, request.params.issue_iid, actor, level);
      const note = await issues.addNoteFromUser(project, issue, actor.user.id, request.body.body, spamContextOf(request, actor.user.id));
      return reply.code(201).send(mapNote(note, base, await users.mapByIds([note.author_id]), issue.iid));
    },
  );

  app.get(
    '/projects/:id/issues/:issue_iid/notes',
    {
      schema: {
        summary: 'Lists the comments of an issue',
        tags,
        params: S.IssueParams,
        querystring: S.ListNotesQuery,
        response: { 200: I.NoteList },
      },
      config: { policy: { auth: 'optional' } },
    },
    async (request, reply) => {
      const { project, level } = await lookup.project(request, request.params.id);
      const issue = await issues.get(project, request.params.issue_iid, request.actor, level);
      const page = pageOf(request.query);
      const { rows, total } = await issues.listNotes(issue, request.query.sort ?? 'desc', page.limit, page.offset);
      const byId = await users.mapByIds(rows.map((n) => n.author_id));
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((n) => mapNote(n, base, byId, issue.iid));
    },
  );

  app.get(
    '/projects/:id/issues/:issue_iid/notes/:note_id',
    {
      schema: { summary: 'Shows a comment of an issue', tags, params: S.NoteParams, response: { 200: I.Note } },
      config: { policy: { auth: 'optional' } },
    },
    async (request) => {
      const { project, level } = await lookup.project(request, request.params.id);
      const issue = await issues.get(project, request.params.issue_iid, request.actor, level);
      const note = await issues.getNote(issue, request.params.note_id);
      return mapNote(note, base, await users.mapByIds([note.author_id]), issue.iid);
    },
  );

  app.put(
    '/projects/:id/issues/:issue_iid/notes/:note_id',
    {
      schema: { summary: 'Edits a comment of an issue', tags, params: S.NoteParams, body: S.NoteBody, response: { 200: I.Note } },
      config: { policy: { auth: 'required' } },
    },
    async (request) => {
      const actor = requireActor(request);
      const { project, level } = await lookup.project(request, request.params.id);
      const issue = await issues.get(project, request.params.issue_iid, actor, level);
      const found = await issues.getNote(issue, request.params.note_id);
      const note = await issues.updateNote(found, actor, request.body.body, spamContextOf(request, actor.user.id));
      return mapNote(note, base, await users.mapByIds([note.author_id]), issue.iid);
    },
  );

  app.delete(
    '/projects/:id/issues/:issue_iid/notes/:note_id',
    {
      schema: { summary: 'Deletes a comment of an issue', tags, params: S.NoteParams, response: { 204: Type.Null() } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const { project, level } = await lookup.project(request, request.params.id);
      const issue = await issues.get(project, request.params.issue_iid, actor, level);
      const note = await issues.getNote(issue, request.params.note_id);
      checkUnmodifiedSince(request, note.updated_at);
      await issues.removeNote(note, actor, level);
      return reply.code(204).send(null);
    },
  );
}
