import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { FastifyReply } from 'fastify';
import type { Flash as FlashMessage, PageState } from './page-policy.js';
import { ProjectNav, type ProjectNavProps } from './project-nav.js';
import { SCRIPT_URL } from './static.js';

/** One step of the breadcrumb trail; the last one is the page itself and is not a link. */
export interface Crumb {
  readonly label: string;
  readonly href?: string;
}

export interface LayoutProps {
  title: string;
  /** The request's page state (who is signed in, the CSRF token, a flash); null on pages outside the layer. */
  page?: Pick<PageState, 'actor' | 'csrf' | 'flash'> | null;
  /** Older pages pass the signed-in user's name and the CSRF token themselves. */
  username?: string | null | undefined;
  csrf?: string | undefined;
  crumbs?: readonly Crumb[];
  /** The project's own navigation (Issues, Activity, Monitor, Settings) on project pages. */
  project?: ProjectNavProps;
  children: ComponentChildren;
}

function UserMenu({ username, isAdmin, csrf }: { username: string; isAdmin: boolean; csrf: string }) {
  // A details element opens without script (the CSP allows none inline) and works by keyboard.
  return (
    <details class="user-menu">
      <summary>{username}</summary>
      <ul>
        <li>
          <a href={`/${username}`}>Profile</a>
        </li>
        <li>
          <a href="/-/user_settings/personal_access_tokens">Access tokens</a>
        </li>
        <li>
          <a href="/-/user_settings/applications">Applications</a>
        </li>
        <li>
          <a href="/-/profile/notifications">Notifications</a>
        </li>
        <li>
          <a href="/-/user_settings/password/edit">Password</a>
        </li>
        <li>
          <a href="/-/user_settings/profile">Edit profile</a>
        </li>
        {isAdmin ? (
          <li>
            <a href="/admin">Admin</a>
          </li>
        ) : null}
        <li>
          <form method="post" action="/users/sign_out">
            <input type="hidden" name="authenticity_token" value={csrf} />
            <button type="submit" class="link">
              Sign out
            </button>
          </form>
        </li>
      </ul>
    </details>
  );
}

function Breadcrumbs({ crumbs }: { crumbs: readonly Crumb[] }) {
  return (
    <nav class="crumbs" aria-label="Breadcrumb">
      <ol>
        {crumbs.map((crumb, i) => (
          <li key={i}>{crumb.href && i < crumbs.length - 1 ? <a href={crumb.href}>{crumb.label}</a> : <span>{crumb.label}</span>}</li>
        ))}
      </ol>
    </nav>
  );
}

/**
 * The page frame every server-rendered page shares: one CSS file and one small same-origin script
 * that only enhances (copy buttons); no client framework.
 */
export function Layout({ title, page, username, csrf, crumbs, project, children }: LayoutProps) {
  const user = page?.actor?.user ?? null;
  const name = user?.username ?? username ?? null;
  const token = page?.csrf ?? csrf ?? '';
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Basalt`}</title>
        <link rel="stylesheet" href="/-/static/basalt.css" />
        <script src={SCRIPT_URL} defer />
      </head>
      <body>
        <header class="topbar">
          <a class="brand" href="/">
            Basalt
          </a>
          {name ? (
            <nav class="main-nav" aria-label="Main">
              <a href="/dashboard/projects">Projects</a>
              <a href="/dashboard/groups">Groups</a>
              <a href="/dashboard/activity">Activity</a>
            </nav>
          ) : null}
          <div class="topbar-end">
            {name ? <UserMenu username={name} isAdmin={user?.isAdmin ?? false} csrf={token} /> : <a href="/users/sign_in">Sign in</a>}
          </div>
        </header>
        <div class={project ? 'shell with-sidebar' : 'shell'}>
          {project ? <ProjectNav {...project} /> : null}
          <main>
            {crumbs && crumbs.length > 0 ? <Breadcrumbs crumbs={crumbs} /> : null}
            {page?.flash ? <Flash kind={page.flash.kind}>{page.flash.text}</Flash> : null}
            {children}
          </main>
        </div>
      </body>
    </html>
  );
}

/** Sends a page: HTML, never cached, anti-framing headers set by the response hook. */
export function sendPage(reply: FastifyReply, page: preact.VNode, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(`<!doctype html>${renderToString(page)}`);
}

export function Flash({ kind, children }: { kind: FlashMessage['kind']; children: ComponentChildren }) {
  return (
    <p class={`flash flash-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}

/** What to do next on an empty list: a sentence and, where there is one, the action. */
export function EmptyState({
  title,
  children,
  action,
}: {
  title: string;
  children?: ComponentChildren;
  action?: { href: string; label: string };
}) {
  return (
    <section class="empty-state">
      <h2>{title}</h2>
      {children ? <p>{children}</p> : null}
      {action ? (
        <a class="button" href={action.href}>
          {action.label}
        </a>
      ) : null}
    </section>
  );
}
