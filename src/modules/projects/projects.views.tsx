import type { NamespaceRow } from './namespaces.repository.js';
import type { ProjectRow } from './projects.repository.js';

/** `2026-11-26 15:08`, the page's way of writing a time (UTC). */
export const shortTime = (ms: number): string => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

const VISIBILITY_TITLES: Record<string, string> = {
  private: 'Private: only members see it',
  internal: 'Internal: every signed-in user sees it',
  public: 'Public: everyone sees it',
};

export function VisibilityBadge({ visibility }: { visibility: string }) {
  return (
    <span class="badge" title={VISIBILITY_TITLES[visibility] ?? visibility}>
      {visibility}
    </span>
  );
}

/** Projects as a list of links to their pages, with visibility and description. */
export function ProjectList({ projects, id = 'projects' }: { projects: readonly ProjectRow[]; id?: string }) {
  return (
    <ul class="item-list" id={id}>
      {projects.map((project) => (
        <li key={project.id} id={`project-${project.id}`}>
          <a href={`/${project.full_path}`} class="item-title">
            {project.full_path}
          </a>{' '}
          <VisibilityBadge visibility={project.visibility} />
          {project.description ? <div class="muted">{project.description}</div> : null}
          <div class="muted small">Updated {shortTime(project.last_activity_at)}</div>
        </li>
      ))}
    </ul>
  );
}

/** Groups as a list of links to their pages. */
export function GroupList({ groups, id = 'groups' }: { groups: readonly NamespaceRow[]; id?: string }) {
  return (
    <ul class="item-list" id={id}>
      {groups.map((group) => (
        <li key={group.id} id={`group-${group.id}`}>
          <a href={`/groups/${group.full_path}`} class="item-title">
            {group.full_path}
          </a>{' '}
          <VisibilityBadge visibility={group.visibility} />
          {group.description ? <div class="muted">{group.description}</div> : null}
        </li>
      ))}
    </ul>
  );
}

/** Newer and older pages of a list; `href(n)` is the address of page n. */
export function Pager({ page, hasNext, href }: { page: number; hasNext: boolean; href: (page: number) => string }) {
  if (page <= 1 && !hasNext) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {page > 1 ? (
        <a href={href(page - 1)} rel="prev">
          Previous page
        </a>
      ) : null}
      <span class="muted">Page {page}</span>
      {hasNext ? (
        <a href={href(page + 1)} rel="next">
          Next page
        </a>
      ) : null}
    </nav>
  );
}
