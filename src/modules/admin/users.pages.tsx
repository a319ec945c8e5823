import type { Actor } from '../../infra/auth/index.js';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { NotFoundError } from '../../infra/errors/index.js';
import { deepestPage, type ApiApp } from '../../infra/http/index.js';
import {
  ActionButton,
  Checkbox,
  Csrf,
  EmptyState,
  Field,
  FormError,
  formErrorsOf,
  sendPage,
  type FieldErrors,
  type FlashMessage,
  type PageState,
} from '../../web/index.js';
import type { UserRow } from '../identity/index.js';
import type { AdminPageDeps } from './admin.deps.js';
import { AdminLayout, formatTime } from './admin.views.js';

const PER_PAGE = 20;
const ADMIN = { signIn: 'required', admin: true } as const;

const ListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 255 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: deepestPage(PER_PAGE) })),
});
const UserParams = Type.Object({ username: Type.String({ minLength: 1, maxLength: 255 }) });
const Csrf_ = { authenticity_token: Type.Optional(Type.String({ maxLength: 256 })) };
const NewUserForm = Type.Object({
  ...Csrf_,
  username: Type.String({ minLength: 1, maxLength: 255 }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  email: Type.String({ minLength: 1, maxLength: 255 }),
  password: Type.Optional(Type.String({ maxLength: 1024 })),
  admin: Type.Optional(Type.Literal('1')),
});
const PasswordForm = Type.Object({ ...Csrf_, password: Type.String({ minLength: 1, maxLength: 1024 }) });
const ActionForm = Type.Object(Csrf_);

const userPath = (user: Pick<UserRow, 'username'>) => `/admin/users/${encodeURIComponent(user.username)}`;

function NewUserView({ page, input, errors }: { page: PageState; input: Record<string, unknown>; errors: FieldErrors }) {
  return (
    <AdminLayout title="New user" page={page} section="users" crumbs={[{ label: 'Users', href: '/admin/users' }, { label: 'New user' }]}>
      <h1>New user</h1>
      <form method="post" action="/admin/users" class="stacked">
        <Csrf token={page.csrf} />
        <FormError errors={errors} />
        <Field label="Name" name="name" value={input.name} error={errors.name} required maxLength={255} />
        <Field label="Username" name="username" value={input.username} error={errors.username} required maxLength={255} />
        <Field label="Email" name="email" type="email" value={input.email} error={errors.email} required maxLength={255} />
        <Field
          label="Password"
          name="password"
          type="password"
          autocomplete="new-password"
          error={errors.password}
          hint="At least 8 characters. Leave it empty to give the user a random one, to be reset later."
        />
        <Checkbox label="Administrator" name="admin" checked={input.admin === '1'} />
        <p>
          <button type="submit">Create user</button> <a href="/admin/users">Cancel</a>
        </p>
      </form>
    </AdminLayout>
  );
}

function UserView({ page, user, errors }: { page: PageState; user: UserRow; errors: FieldErrors }) {
  const self = page.actor?.user.id === user.id;
  const path = userPath(user);
  return (
    <AdminLayout
      title={user.username}
      page={page}
      section="users"
      crumbs={[{ label: 'Users', href: '/admin/users' }, { label: user.username }]}
    >
      <div class="page-head">
        <h1>
          {user.name} <span class="muted">@{user.username}</span>
        </h1>
        {user.bot === 1 ? null : <a href={`/${user.username}`}>Public profile</a>}
      </div>
      <dl class="facts">
        <dt>Email</dt>
        <dd>{user.email}</dd>
        <dt>State</dt>
        <dd id="user-state">{user.state === 'blocked' ? <span class="badge danger">Blocked</span> : <span class="badge">Active</span>}</dd>
        <dt>Role</dt>
        <dd id="user-role">{user.is_admin === 1 ? 'Administrator' : user.bot === 1 ? 'Bot' : 'Regular'}</dd>
        <dt>Created</dt>
        <dd>{formatTime(user.created_at)}</dd>
        <dt>Last sign-in</dt>
        <dd>{formatTime(user.last_sign_in_at)}</dd>
      </dl>
      <h2>Account</h2>
      {self ? (
        <p class="muted">You cannot block yourself or take away your own administrator role.</p>
      ) : (
        <p class="actions">
          {user.state === 'blocked' ? (
            <ActionButton action={`${path}/unblock`} csrf={page.csrf} label="Unblock user" />
          ) : (
            <ActionButton action={`${path}/block`} csrf={page.csrf} label="Block user" kind="danger" />
          )}{' '}
          {user.is_admin === 1 ? (
            <ActionButton action={`${path}/admin/revoke`} csrf={page.csrf} label="Remove administrator role" kind="secondary" />
          ) : user.bot === 1 ? null : (
            <ActionButton action={`${path}/admin/grant`} csrf={page.csrf} label="Make administrator" kind="secondary" />
          )}
        </p>
      )}
      {user.bot === 1 ? null : (
        <>
          <h2>Reset password</h2>
          <form method="post" action={`${path}/password`} class="stacked">
            <Csrf token={page.csrf} />
            <FormError errors={errors} />
            <Field
              label="New password"
              name="password"
              type="password"
              autocomplete="new-password"
              error={errors.password}
              hint="At least 8 characters. The user's sessions end."
              required
            />
            <button type="submit">Set password</button>
          </form>
        </>
      )}
    </AdminLayout>
  );
}

/** `/admin/users`: every account, with create, block and unblock, administrator role and password reset. */
export function userPages(web: ApiApp, deps: AdminPageDeps): void {
  const { users } = deps.identity;
  const renderNew = (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors) => (
    <NewUserView page={request.page} input={input} errors={errors} />
  );
  const find = async (username: string) => {
    const user = await users.findByUsername(username);
    if (!user) throw new NotFoundError('User');
    return user;
  };
  const renderUser = async (request: FastifyRequest, _input: Record<string, unknown>, errors: FieldErrors) => (
    <UserView page={request.page} user={await find((request.params as { username: string }).username)} errors={errors} />
  );

  web.get('/admin/users', { schema: { querystring: ListQuery }, config: { page: ADMIN } }, async (request, reply) => {
    const search = request.query.search?.trim() ?? '';
    const pageNumber = request.query.page ?? 1;
    const { rows, total } = await users.list({ search: search || undefined, searchEmails: true }, PER_PAGE, (pageNumber - 1) * PER_PAGE);
    const pages = Math.max(1, Math.ceil(total / PER_PAGE));
    const link = (n: number) => `/admin/users?${new URLSearchParams({ ...(search ? { search } : {}), page: String(n) }).toString()}`;
    return sendPage(
      reply,
      <AdminLayout title="Users" page={request.page} section="users" crumbs={[{ label: 'Users' }]}>
        <div class="page-head">
          <h1>Users</h1>
          <a class="button" href="/admin/users/new">
            New user
          </a>
        </div>
        <form method="get" action="/admin/users" class="search" role="search">
          <label for="user-search">Search users</label>{' '}
          <input id="user-search" type="search" name="search" value={search} maxLength={255} />{' '}
          <button type="submit" class="secondary">
            Search
          </button>
        </form>
        {rows.length === 0 ? (
          <EmptyState title="No users match" action={{ href: '/admin/users/new', label: 'Create a user' }}>
            Try another search, or create the account.
          </EmptyState>
        ) : (
          <table>
            <thead>
              <tr>
                <th>User</th>
                <th>Email</th>
                <th>State</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((user) => (
                <tr key={user.id}>
                  <td>
                    <a href={userPath(user)}>{user.username}</a>{' '}
                    {user.name !== user.username ? <span class="muted">{user.name}</span> : null}{' '}
                    {user.is_admin === 1 ? <span class="badge">Admin</span> : null}
                    {user.bot === 1 ? <span class="badge">Bot</span> : null}
                  </td>
                  <td>{user.email}</td>
                  <td>{user.state === 'blocked' ? <span class="badge danger">Blocked</span> : 'Active'}</td>
                  <td>{formatTime(user.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p class="pager">
          {pageNumber > 1 ? <a href={link(pageNumber - 1)}>Previous</a> : null} Page {pageNumber} of {pages} ({total} users){' '}
          {pageNumber < pages ? <a href={link(pageNumber + 1)}>Next</a> : null}
        </p>
      </AdminLayout>,
    );
  });

  web.get('/admin/users/new', { config: { page: ADMIN } }, async (request, reply) => sendPage(reply, renderNew(request, {}, {})));

  web.post('/admin/users', { schema: { body: NewUserForm }, config: { page: { ...ADMIN, form: renderNew } } }, async (request, reply) => {
    const body = request.body;
    try {
      const user = await users.create(
        {
          username: body.username,
          name: body.name,
          email: body.email,
          password: body.password ? body.password : undefined,
          admin: body.admin === '1',
        },
        undefined,
        { by: request.page.actor },
      );
      return reply.redirectWithFlash(userPath(user), { kind: 'notice', text: `User ${user.username} was created.` });
    } catch (error) {
      const errors = formErrorsOf(error);
      if (!errors) throw error;
      return sendPage(reply, renderNew(request, { ...body, password: '' }, errors), 400);
    }
  });

  web.get('/admin/users/:username', { schema: { params: UserParams }, config: { page: ADMIN } }, async (request, reply) =>
    sendPage(reply, await renderUser(request, {}, {})),
  );

  const action = (suffix: string, run: (user: UserRow, actorId: number, actor: Actor) => Promise<FlashMessage>) =>
    web.post(
      `/admin/users/:username/${suffix}`,
      { schema: { params: UserParams, body: ActionForm }, config: { page: ADMIN } },
      async (request, reply) => {
        const user = await find(request.params.username);
        return reply.redirectWithFlash(userPath(user), await run(user, request.page.actor!.user.id, request.page.actor!));
      },
    );
  action('block', async (user, actorId, actor) => {
    if (user.id === actorId) return { kind: 'error', text: 'You cannot block yourself.' };
    await users.setState(user.id, 'blocked', actor);
    return { kind: 'notice', text: `${user.username} is blocked: their sessions and tokens no longer work.` };
  });
  action('unblock', async (user, _actorId, actor) => {
    await users.setState(user.id, 'active', actor);
    return { kind: 'notice', text: `${user.username} is unblocked.` };
  });
  action('admin/grant', async (user, _actorId, actor) => {
    if (user.bot === 1) return { kind: 'error', text: 'A bot cannot be an administrator.' };
    await users.update(user.id, { admin: true }, undefined, actor);
    return { kind: 'notice', text: `${user.username} is now an administrator.` };
  });
  action('admin/revoke', async (user, actorId, actor) => {
    if (user.id === actorId) return { kind: 'error', text: 'You cannot take away your own administrator role.' };
    await users.update(user.id, { admin: false }, undefined, actor);
    return { kind: 'notice', text: `${user.username} is no longer an administrator.` };
  });

  web.post(
    '/admin/users/:username/password',
    { schema: { params: UserParams, body: PasswordForm }, config: { page: { ...ADMIN, form: renderUser } } },
    async (request, reply) => {
      const user = await find(request.params.username);
      try {
        await users.update(user.id, { password: request.body.password }, undefined, request.page.actor);
      } catch (error) {
        const errors = formErrorsOf(error);
        if (!errors) throw error;
        return sendPage(reply, await renderUser(request, {}, errors), 400);
      }
      return reply.redirectWithFlash(userPath(user), {
        kind: 'notice',
        text: `The password of ${user.username} was changed; their sessions ended.`,
      });
    },
  );
}
