import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../../infra/crypto.js';
import { TooManyRequestsError, ValidationError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { Csrf, Field, FormError, Layout, sendPage, type FieldErrors, type PageState, fieldErrorsOf } from '../../web/index.js';
import { SettingsNav, settingsCrumbs } from './settings-nav.views.js';
import type { SignInService } from './sign-in.service.js';
import type { UsersService } from './users.service.js';

export const PASSWORD_PAGE = '/-/user_settings/password/edit';
const PASSWORD_FORM = '/-/user_settings/password';

const PasswordForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  current_password: Type.String({ minLength: 1, maxLength: 1024 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  password_confirmation: Type.String({ maxLength: 1024 }),
});

/** `/-/user_settings/password/edit`: the current password, the new one twice. Nothing typed is drawn back. */
function PasswordPage({ page, errors }: { page: PageState; errors: FieldErrors }) {
  return (
    <Layout title="Password" page={page} crumbs={settingsCrumbs('password')}>
      <SettingsNav current="password" />
      <h1>Change your password</h1>
      <p>
        After a change, every other browser and device signed in to your account is signed out. This browser stays signed in. Access tokens
        and authorized applications keep working: revoke them on their own pages.
      </p>
      <form method="post" action={PASSWORD_FORM} id="change-password">
        <Csrf token={page.csrf} />
        <FormError errors={errors} />
        <Field
          label="Current password"
          name="current_password"
          type="password"
          error={errors.current_password}
          required
          autocomplete="current-password"
          maxLength={1024}
        />
        <Field
          label="New password"
          name="password"
          type="password"
          error={errors.password}
          hint="At least 8 characters."
          required
          autocomplete="new-password"
          maxLength={1024}
        />
        <Field
          label="Password confirmation"
          name="password_confirmation"
          type="password"
          error={errors.password_confirmation}
          required
          autocomplete="new-password"
          maxLength={1024}
        />
        <p>
          <button type="submit">Save password</button>
        </p>
      </form>
    </Layout>
  );
}

/**
 * Changing the password with the current one (the established product's rule). The users
 * service ends the user's other sessions in the same transaction and keeps the session making
 * the change, so this browser stays signed in: the person who typed both passwords is the owner.
 */
export function passwordPages(web: ApiApp, users: UsersService, signIn: SignInService): void {
  const form = (request: FastifyRequest, _input: Record<string, unknown>, errors: FieldErrors) => (
    <PasswordPage page={request.page} errors={errors} />
  );
  const signedIn = { signIn: 'required' } as const;

  web.get(PASSWORD_PAGE, { config: { page: signedIn } }, async (request, reply) =>
    sendPage(reply, <PasswordPage page={request.page} errors={{}} />),
  );

  web.post(PASSWORD_FORM, { schema: { body: PasswordForm }, config: { page: { ...signedIn, form } } }, async (request, reply) => {
    const actor = request.page.actor!;
    const { current_password, password, password_confirmation } = request.body;
    const refuse = (errors: FieldErrors) => sendPage(reply, <PasswordPage page={request.page} errors={errors} />, 400);
    const checked = await signIn.checkPassword(actor.user.username, current_password, request.ip);
    if (checked instanceof TooManyRequestsError) {
      reply.headers(checked.headers);
      return sendPage(
        reply,
        <PasswordPage page={request.page} errors={{ _: 'Too many wrong passwords. Wait a minute and try again.' }} />,
        429,
      );
    }
    if (checked === 'invalid') return refuse({ current_password: 'is not correct. Enter the password you sign in with now.' });
    if (!constantTimeEqual(password, password_confirmation)) return refuse({ password_confirmation: "doesn't match the new password" });
    try {
      await users.update(actor.user.id, { password }, actor.credential.kind === 'session' ? actor.credential.id : undefined, actor);
    } catch (error) {
      if (error instanceof ValidationError) return refuse(fieldErrorsOf(error));
      throw error;
    }
    return reply.redirectWithFlash(PASSWORD_PAGE, {
      kind: 'notice',
      text: 'Your password was changed. Every other session of your account was signed out; this browser stays signed in.',
    });
  });
}
