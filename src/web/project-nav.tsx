/** The roles' least levels, as the projects module numbers them (GitLab's access levels). */
export const ROLE = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export const ROLE_NAMES: Readonly<Record<number, string>> = { 10: 'Guest', 20: 'Reporter', 30: 'Developer', 40: 'Maintainer', 50: 'Owner' };

export interface ProjectNavProps {
  /** The project's full path, as in its web address. */
  readonly fullPath: string;
  readonly name: string;
  /** The caller's access level on the project (0 for a visitor of a public project). */
  readonly level: number;
  /** Which entry is the current page. */
  readonly current?: 'overview' | 'issues' | 'activity' | 'alerts' | 'errors' | 'settings' | 'webhooks';
}

/**
 * A project's navigation: each entry only for the roles whose pages it reaches, so a link
 * never leads to a 403 (Monitor > Alerts for Developers, Settings for Maintainers).
 */
export function ProjectNav({ fullPath, name, level, current }: ProjectNavProps) {
  const base = `/${fullPath}`;
  const entries: { id: NonNullable<ProjectNavProps['current']>; label: string; href: string; least: number }[] = [
    { id: 'overview', label: 'Overview', href: base, least: 0 },
    { id: 'issues', label: 'Issues', href: `${base}/-/issues`, least: 0 },
    { id: 'activity', label: 'Activity', href: `${base}/-/activity`, least: 0 },
    { id: 'alerts', label: 'Alerts', href: `${base}/-/alert_management`, least: ROLE.developer },
    { id: 'errors', label: 'Error tracking', href: `${base}/-/error_tracking`, least: ROLE.reporter },
    { id: 'settings', label: 'Settings', href: `${base}/-/settings/operations`, least: ROLE.maintainer },
    { id: 'webhooks', label: 'Webhooks', href: `${base}/-/hooks`, least: ROLE.maintainer },
  ];
  return (
    <nav class="project-nav" aria-label="Project">
      <a class="project-name" href={base}>
        {name}
      </a>
      <ul>
        {entries
          .filter((entry) => level >= entry.least)
          .map((entry) => (
            <li key={entry.id}>
              <a href={entry.href} aria-current={entry.id === current ? 'page' : undefined}>
                {entry.label}
              </a>
            </li>
          ))}
      </ul>
    </nav>
  );
}
