import { ActionButton, Csrf, EmptyState, Field, FormError, Markdown, TextArea, type FieldErrors } from '../../web/index.js';
import type { UserRow } from '../identity/index.js';
import type { IssueRow, NoteRow } from './issues.repository.js';
import type { IssueOrigin } from './page-extensions.service.js';
import type { ProjectRow } from './projects.repository.js';
import { Pager, shortTime } from './projects.views.js';

export const issuesPath = (project: ProjectRow) => `/${project.full_path}/-/issues`;
export const issuePath = (project: ProjectRow, iid: number) => `${issuesPath(project)}/${iid}`;

export type IssueState = 'opened' | 'closed' | 'all';
const TABS: [IssueState, string][] = [
  ['opened', 'Open'],
  ['closed', 'Closed'],
  ['all', 'All'],
];

const userName = (users: Map<number, UserRow>, id: number | null) => {
  const user = id === null ? undefined : users.get(id);
  return user ? (
    <a href={`/${user.username}`} title={user.name}>
      @{user.username}
    </a>
  ) : (
    <span>a deleted user</span>
  );
};

function StateBadge({ issue }: { issue: IssueRow }) {
  return <span class={`badge state-${issue.state}`}>{issue.state === 'closed' ? 'Closed' : 'Open'}</span>;
}

export interface IssueListProps {
  project: ProjectRow;
  state: IssueState;
  search: string;
  counts: Record<IssueState, number>;
  issues: readonly IssueRow[];
  notes: Map<number, number>;
  users: Map<number, UserRow>;
  /** Each shown issue's assignees (user ids); their rows are in `users`. */
  assignees: Map<number, number[]>;
  /** The UTC day today, to mark an open issue past its due date. */
  today: string;
  page: number;
  hasNext: boolean;
  canCreate: boolean;
}

export function IssueList(props: IssueListProps) {
  const { project, state, search, counts, issues, page } = props;
  const href = (tab: IssueState, n = 1) => {
    const query = new URLSearchParams();
    if (tab !== 'opened') query.set('state', tab);
    if (search) query.set('search', search);
    if (n > 1) query.set('page', String(n));
    const text = query.toString();
    return `${issuesPath(project)}${text ? `?${text}` : ''}`;
  };
  return (
    <>
      <div class="page-head">
        <h1>Issues</h1>
        {props.canCreate ? (
          <a class="button" href={`${issuesPath(project)}/new`}>
            New issue
          </a>
        ) : null}
      </div>
      <nav class="tabs" aria-label="Issue state">
        {TABS.map(([tab, label]) => (
          <a key={tab} href={href(tab)} aria-current={tab === state ? 'page' : undefined}>
            {label} <span class="badge">{counts[tab]}</span>
          </a>
        ))}
      </nav>
      <form method="get" action={issuesPath(project)} class="search-form" role="search">
        {state !== 'opened' ? <input type="hidden" name="state" value={state} /> : null}
        <label for="issue-search">Search issues</label>
        <input id="issue-search" type="search" name="search" value={search} maxLength={255} />
        <button type="submit" class="secondary">
          Search
        </button>
      </form>
      {issues.length === 0 ? (
        <EmptyState
          title={
            search
              ? 'No issues match your search'
              : counts.all === 0
                ? 'No issues yet'
                : state === 'closed'
                  ? 'No closed issues'
                  : 'No open issues'
          }
          {...(props.canCreate && !search ? { action: { href: `${issuesPath(project)}/new`, label: 'New issue' } } : {})}
        >
          Issues track work, bugs and incidents of this project.
        </EmptyState>
      ) : (
        <ul class="item-list" id="issues">
          {issues.map((issue) => (
            <li key={issue.id} id={`issue-${issue.iid}`}>
              <a class="item-title" href={issuePath(project, issue.iid)}>
                {issue.title}
              </a>{' '}
              {issue.confidential === 1 ? <span class="badge">Confidential</span> : null}
              {issue.issue_type === 'incident' ? <span class="badge">Incident</span> : null}
              <div class="muted small">
                #{issue.iid} · <StateBadge issue={issue} /> · opened {shortTime(issue.created_at)} by{' '}
                {userName(props.users, issue.author_id)}
                {(props.notes.get(issue.id) ?? 0) > 0 ? ` · ${props.notes.get(issue.id)} comments` : ''}
                {issue.due_date !== null ? (
                  <>
                    {' · due '}
                    <span class={issue.state === 'opened' && issue.due_date < props.today ? 'state-overdue' : undefined}>
                      {issue.due_date}
                      {issue.state === 'opened' && issue.due_date < props.today ? ' (overdue)' : ''}
                    </span>
                  </>
                ) : null}
                {(props.assignees.get(issue.id) ?? []).length > 0 ? (
                  <>
                    {' · assigned to '}
                    {(props.assignees.get(issue.id) ?? []).map((id, i) => (
                      <span key={id}>
                        {i > 0 ? ', ' : ''}
                        {userName(props.users, id)}
                      </span>
                    ))}
                  </>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      )}
      <Pager page={page} hasNext={props.hasNext} href={(n) => href(state, n)} />
    </>
  );
}

export function NewIssueForm({
  project,
  csrf,
  input,
  errors,
}: {
  project: ProjectRow;
  csrf: string;
  input: Record<string, unknown>;
  errors: FieldErrors;
}) {
  return (
    <>
      <h1>New issue</h1>
      <form method="post" action={issuesPath(project)} class="stacked">
        <Csrf token={csrf} />
        <FormError errors={errors} />
        <Field label="Title" name="title" value={input.title} error={errors.title} required maxLength={255} />
        <TextArea
          label="Description"
          name="description"
          value={input.description}
          error={errors.description}
          rows={8}
          hint="Markdown is supported."
        />
        <button type="submit">Create issue</button> <a href={issuesPath(project)}>Cancel</a>
      </form>
    </>
  );
}

export interface IssuePageProps {
  project: ProjectRow;
  issue: IssueRow;
  notes: readonly NoteRow[];
  /** Which page of the comments is shown, of how many (oldest first). */
  notesPage: number;
  notesPages: number;
  users: Map<number, UserRow>;
  origins: readonly IssueOrigin[];
  csrf: string;
  signedIn: boolean;
  canComment: boolean;
  canClose: boolean;
  comment?: { input: Record<string, unknown>; errors: FieldErrors };
  /** The issue's assignees (user ids, ascending); their rows are in `users`. */
  assigneeIds: readonly number[];
  /** The UTC day today, to mark an open issue past its due date. */
  today: string;
  /** For Reporter and above: the project members who may be assigned, and whether several may. */
  planning?: { members: readonly { id: number; name: string; username: string }[]; multiple: boolean } | undefined;
}

/** Assignees and due date beside the issue, with the form that sets them for Reporter and above. */
function IssueSidebar(props: IssuePageProps) {
  const { issue, users, planning } = props;
  const here = issuePath(props.project, issue.iid);
  const overdue = issue.due_date !== null && issue.state === 'opened' && issue.due_date < props.today;
  return (
    <aside class="issue-sidebar" aria-label="Issue details">
      <dl class="facts">
        <dt>Assignees</dt>
        <dd data-field="Assignees" id="issue-assignees">
          {props.assigneeIds.length === 0 ? (
            <span class="muted">None</span>
          ) : (
            <ul class="issue-assignees">
              {props.assigneeIds.map((id) => (
                <li key={id}>
                  {users.get(id)?.name ?? 'a deleted user'} {userName(users, id)}
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Due date</dt>
        <dd data-field="Due date" id="issue-due-date">
          {issue.due_date === null ? (
            <span class="muted">None</span>
          ) : (
            <>
              <time datetime={issue.due_date}>{issue.due_date}</time> {overdue ? <span class="badge state-overdue">Overdue</span> : null}
            </>
          )}
        </dd>
      </dl>
      {planning ? (
        <form method="post" action={`${here}/sidebar`} class="stacked" id="issue-sidebar-form">
          <Csrf token={props.csrf} />
          <div class="field">
            <label for="assignee_ids">Assignees</label>
            <select
              id="assignee_ids"
              name="assignee_ids"
              multiple={planning.multiple}
              size={planning.multiple ? Math.min(6, Math.max(2, planning.members.length)) : undefined}
            >
              {planning.multiple ? null : (
                <option value="" selected={props.assigneeIds.length === 0}>
                  Unassigned
                </option>
              )}
              {planning.members.map((m) => (
                <option key={m.id} value={String(m.id)} selected={props.assigneeIds.includes(m.id)}>
                  {m.name} (@{m.username})
                </option>
              ))}
            </select>
            {planning.multiple ? <p class="hint muted small">Select none to unassign; Ctrl or ⌘ selects several.</p> : null}
          </div>
          <Field label="Due date" name="due_date" type="date" value={issue.due_date ?? ''} hint="Leave empty for none." />
          <button type="submit">Save</button>
        </form>
      ) : null}
    </aside>
  );
}

/** Older and newer comments of a long discussion, with where this page stands. */
function CommentsPager({ here, page, pages }: { here: string; page: number; pages: number }) {
  if (pages <= 1 && page <= 1) return null;
  const href = (n: number) => (n > 1 ? `${here}?notes_page=${n}#notes-heading` : `${here}#notes-heading`);
  return (
    <nav class="pager" aria-label="Comment pages">
      {page > 1 ? (
        <a href={href(page - 1)} rel="prev">
          Older comments
        </a>
      ) : null}
      <span class="muted">
        Comments page {page} of {pages}
      </span>
      {page < pages ? (
        <a href={href(page + 1)} rel="next">
          Newer comments
        </a>
      ) : null}
    </nav>
  );
}

export function IssuePage(props: IssuePageProps) {
  const { project, issue, users, csrf } = props;
  const here = issuePath(project, issue.iid);
  return (
    <>
      <div class="page-head">
        <h1 id="issue-title">{issue.title}</h1>
        {props.canClose ? (
          <ActionButton
            action={`${here}/${issue.state === 'closed' ? 'reopen' : 'close'}`}
            csrf={csrf}
            label={issue.state === 'closed' ? 'Reopen issue' : 'Close issue'}
            kind="secondary"
          />
        ) : null}
      </div>
      <p class="muted">
        <StateBadge issue={issue} /> {issue.confidential === 1 ? <span class="badge">Confidential</span> : null}{' '}
        {issue.issue_type === 'incident' ? <span class="badge">Incident</span> : null} #{issue.iid} opened {shortTime(issue.created_at)} by{' '}
        {userName(users, issue.author_id)}
        {issue.state === 'closed' && issue.closed_at !== null ? (
          <>
            {' '}
            · closed {shortTime(issue.closed_at)}
            {issue.closed_by_id !== null ? <> by {userName(users, issue.closed_by_id)}</> : null}
          </>
        ) : null}
      </p>
      {props.origins.length > 0 ? (
        <ul class="origins" id="issue-origins">
          {props.origins.map((origin) => (
            <li key={origin.label}>Created from {origin.href ? <a href={origin.href}>{origin.label}</a> : origin.label}</li>
          ))}
        </ul>
      ) : null}
      <div class="issue-layout">
        <div class="issue-main">
          <article id="issue-description">
            <Markdown source={issue.description} />
          </article>
          <section aria-labelledby="notes-heading">
            <h2 id="notes-heading">Comments</h2>
            {props.notes.length === 0 && props.notesPage === 1 ? <p class="muted">No comments yet.</p> : null}
            <CommentsPager here={here} page={props.notesPage} pages={props.notesPages} />
            <ol class="notes" id="notes">
              {props.notes.map((note) => (
                <li key={note.id} id={`note-${note.id}`} class={note.system === 1 ? 'note system' : 'note'}>
                  <div class="muted small">
                    {userName(users, note.author_id)} ·{' '}
                    <time datetime={new Date(note.created_at).toISOString()}>{shortTime(note.created_at)}</time>
                  </div>
                  <Markdown source={note.body} />
                </li>
              ))}
            </ol>
            <CommentsPager here={here} page={props.notesPage} pages={props.notesPages} />
            {props.canComment ? (
              <form method="post" action={`${here}/notes`} class="stacked" id="comment-form">
                <Csrf token={csrf} />
                <FormError errors={props.comment?.errors} />
                <TextArea
                  label="Comment"
                  name="body"
                  value={props.comment?.input.body}
                  error={props.comment?.errors.body}
                  rows={4}
                  hint="Markdown is supported."
                />
                <button type="submit">Comment</button>
              </form>
            ) : !props.signedIn ? (
              <p>
                <a href={`/users/sign_in?redirect_to=${encodeURIComponent(here)}`}>Sign in</a> to comment.
              </p>
            ) : null}
          </section>
        </div>
        <IssueSidebar {...props} />
      </div>
    </>
  );
}
