import { createTestApp, type TestApp, type TestAppOptions } from './app.js';
import { createUser, type TestUser } from './factories.js';

/**
 * What most suites make in their before(): the app and a few plain users, each with an `api`
 * token, named as the suite names them:
 * `before(async () => ({ t, alice, bob } = await appWithUsers(['alice', 'bob'])));`
 */
export async function appWithUsers<const Names extends readonly string[]>(
  names: Names,
  options: TestAppOptions = {},
): Promise<{ t: TestApp } & Record<Names[number], TestUser>> {
  const t = await createTestApp(options);
  const users: Record<string, TestUser> = {};
  for (const name of names) users[name] = await createUser(t.app);
  return { t, ...users } as { t: TestApp } & Record<Names[number], TestUser>;
}
