import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { FastifyReply } from 'fastify';

export interface LayoutProps {
  title: string;
  /** The signed-in user's username, shown in the header with a sign-out button. */
  username?: string | null | undefined;
  /** CSRF token for the sign-out form in the header. */
  csrf?: string | undefined;
  children: ComponentChildren;
}

/** The page frame every server-rendered page shares: one CSS file, no client framework. */
export function Layout({ title, username, csrf, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Basalt`}</title>
        <link rel="stylesheet" href="/-/static/basalt.css" />
      </head>
      <body>
        <header class="topbar">
          <a class="brand" href="/">
            Basalt
          </a>
          {username ? (
            <form method="post" action="/users/sign_out" class="signout">
              <span class="who">{username}</span>
              <input type="hidden" name="authenticity_token" value={csrf ?? ''} />
              <button type="submit">Sign out</button>
            </form>
          ) : (
            <a href="/users/sign_in">Sign in</a>
          )}
        </header>
        <main>{children}</main>
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

export function Flash({ kind, children }: { kind: 'error' | 'notice'; children: ComponentChildren }) {
  return (
    <p class={`flash flash-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}
