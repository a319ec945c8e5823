import { Flash, Layout } from '../../web/layout.js';
import type { PageState } from '../../web/index.js';
import { SETTINGS_PAGES } from './settings-nav.views.js';
import type { UserRow } from './users.repository.js';

export interface SignInPageProps {
  csrf: string;
  redirectTo: string | null;
  login?: string | undefined;
  error?: string | undefined;
  notice?: string | undefined;
}

/** `GET /users/sign_in`: the form posts `user[login]`, `user[password]` and the CSRF token. */
export function SignInPage({ csrf, redirectTo, login, error, notice }: SignInPageProps) {
  return (
    <Layout title="Sign in">
      <h1>Sign in</h1>
      {error ? <Flash kind="error">{error}</Flash> : null}
      {notice ? <Flash kind="notice">{notice}</Flash> : null}
      <form method="post" action="/users/sign_in" class="stacked" id="new_user">
        <input type="hidden" name="authenticity_token" value={csrf} />
        {redirectTo ? <input type="hidden" name="redirect_to" value={redirectTo} /> : null}
        <label for="user_login">Username or email</label>
        <input
          type="text"
          id="user_login"
          name="user[login]"
          value={login ?? ''}
          autocomplete="username"
          required
          maxLength={255}
          autofocus
        />
        <label for="user_password">Password</label>
        <input type="password" id="user_password" name="user[password]" autocomplete="current-password" required maxLength={1024} />
        <p>
          <button type="submit">Sign in</button>
        </p>
      </form>
    </Layout>
  );
}

/** `GET /profile`: who is signed in, and where their settings are; the header carries the sign-out button. */
export function ProfilePage({ user, page }: { user: UserRow; page: PageState }) {
  return (
    <Layout title="Profile" page={page}>
      <h1>{user.name}</h1>
      <p>
        Signed in as <strong id="signed-in-username">{user.username}</strong>
        {user.is_admin === 1 ? <span class="badge">Administrator</span> : null}
      </p>
      <p class="muted">{user.email}</p>
      <ul>
        <li>
          <a href={`/${user.username}`}>Your public profile</a>
        </li>
        {Object.values(SETTINGS_PAGES).map((settings) => (
          <li key={settings.href}>
            <a href={settings.href}>{settings.label}</a>
          </li>
        ))}
      </ul>
    </Layout>
  );
}

export const signInPage = (props: SignInPageProps) => <SignInPage {...props} />;
export const profilePage = (user: UserRow, page: PageState) => <ProfilePage user={user} page={page} />;
