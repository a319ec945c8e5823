import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ConflictError, ValidationError } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import {
  Checkbox,
  Csrf,
  Field,
  FormError,
  Layout,
  TextArea,
  sendPage,
  type FieldErrors,
  type PageState,
  fieldErrorsOf,
} from '../../web/index.js';
import { SettingsNav, settingsCrumbs } from './settings-nav.views.js';
import type { UserRow } from './users.repository.js';
import { BIO_MAX, type UsersService } from './users.service.js';

export const PROFILE_PAGE = '/-/user_settings/profile';

const ProfileForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  name: Type.String({ maxLength: 255 }),
  email: Type.String({ maxLength: 255 }),
  // The service says "is too long" in its words; the schema only keeps a body from being huge.
  bio: Type.Optional(Type.String({ maxLength: 4096 })),
  private_profile: Type.Optional(Type.String({ maxLength: 8 })),
});

interface ProfileInput {
  name: string;
  email: string;
  bio: string;
  privateProfile: boolean;
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const inputOfBody = (body: Record<string, unknown>): ProfileInput => ({
  name: str(body.name),
  email: str(body.email),
  bio: str(body.bio),
  privateProfile: body.private_profile !== undefined,
});
const inputOfRow = (user: UserRow): ProfileInput => ({
  name: user.name,
  email: user.email,
  bio: user.bio ?? '',
  privateProfile: user.private_profile === 1,
});

function ProfileSettingsPage({ page, user, input, errors }: { page: PageState; user: UserRow; input: ProfileInput; errors: FieldErrors }) {
  return (
    <Layout title="Edit profile" page={page} crumbs={settingsCrumbs('profile')}>
      <SettingsNav current="profile" />
      <h1>Edit profile</h1>
      <p>
        Signed in as <strong id="signed-in-username">{user.username}</strong>
        {user.is_admin === 1 ? <span class="badge">Administrator</span> : null} · <a href={`/${user.username}`}>View your public profile</a>
      </p>
      <form method="post" action={PROFILE_PAGE} id="edit-profile">
        <Csrf token={page.csrf} />
        <FormError errors={errors} />
        <Field label="Full name" name="name" value={input.name} error={errors.name} required maxLength={255} autocomplete="name" />
        <Field
          label="Email"
          name="email"
          type="email"
          value={input.email}
          error={errors.email}
          required
          maxLength={255}
          autocomplete="email"
          hint="Where notifications go unless you choose another address on the Notifications page."
        />
        <TextArea label="Bio" name="bio" value={input.bio} error={errors.bio} rows={4} hint={`At most ${BIO_MAX} characters.`} />
        <Checkbox
          label="Private profile: show only your username and avatar to others"
          name="private_profile"
          checked={input.privateProfile}
        />
        <p>
          <button type="submit">Update profile settings</button>
        </p>
      </form>
    </Layout>
  );
}

/** `/-/user_settings/profile`: name, email, bio and private profile, through the users service's rules. */
export function profileSettingsPages(web: ApiApp, users: UsersService): void {
  const render = async (request: FastifyRequest, input: ProfileInput | null, errors: FieldErrors) => {
    const user = await users.get(request.page.actor!.user.id);
    return <ProfileSettingsPage page={request.page} user={user} input={input ?? inputOfRow(user)} errors={errors} />;
  };
  const form = (request: FastifyRequest, body: Record<string, unknown>, errors: FieldErrors) => render(request, inputOfBody(body), errors);
  const signedIn = { signIn: 'required' } as const;

  web.get(PROFILE_PAGE, { config: { page: signedIn } }, async (request, reply) => sendPage(reply, await render(request, null, {})));

  web.post(PROFILE_PAGE, { schema: { body: ProfileForm }, config: { page: { ...signedIn, form } } }, async (request, reply) => {
    const input = inputOfBody(request.body);
    try {
      await users.update(request.page.actor!.user.id, {
        name: input.name,
        email: input.email.trim(),
        bio: input.bio,
        private_profile: input.privateProfile,
      });
    } catch (error) {
      const errors =
        error instanceof ValidationError
          ? fieldErrorsOf(error)
          : error instanceof ConflictError
            ? { email: 'has already been taken' }
            : null;
      if (!errors) throw error;
      return sendPage(reply, await render(request, input, errors), 400);
    }
    return reply.redirectWithFlash(PROFILE_PAGE, { kind: 'notice', text: 'Profile was updated.' });
  });
}
