import { CliError, optionalString, requireString, type CliArgs, type CliCommand } from './command.js';
import { asCliError, withInstance, type Instance } from './instance.js';

const USERNAME = { type: 'string', description: 'The user (username, case-insensitive)', valueName: 'USERNAME' } as const;

/** The human user named `--username`; bots (project and group token users) are refused. */
async function findUser({ modules }: Instance, args: CliArgs) {
  const username = requireString(args, 'username');
  const user = await modules.identity.users.findByUsername(username);
  if (!user) throw new CliError(`no user named "${username}"`);
  if (user.bot === 1) throw new CliError(`"${user.username}" is a bot user, which is managed through its token`);
  return user;
}

/** Runs a service call, turning its refusal (a taken username, an invalid e-mail) into one line. */
async function serviceCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw await asCliError(error);
  }
}

export const userCreateCommand: CliCommand = {
  name: ['admin', 'user', 'create'],
  summary: 'Create a user (prints a generated password when none is given)',
  usage: 'basalt admin user create --username USERNAME --email EMAIL [--name NAME] [--password PASSWORD] [--admin]',
  description:
    'The account is confirmed and can sign in at once. Without --password a random one is generated\nand printed once; the user changes it at /-/user_settings/password/edit.',
  options: {
    username: { type: 'string', description: 'Username (also the personal namespace path)', valueName: 'USERNAME' },
    email: { type: 'string', description: 'E-mail address', valueName: 'EMAIL' },
    name: { type: 'string', description: 'Full name (default: the username)', valueName: 'NAME' },
    password: { type: 'string', description: 'Password, at least 8 characters (default: generated and printed)', valueName: 'PASSWORD' },
    admin: { type: 'boolean', description: 'Make the user an administrator' },
  },
  async run(args, ctx) {
    const username = requireString(args, 'username');
    const email = requireString(args, 'email');
    const given = optionalString(args, 'password');
    const { randomPassword } = await import('../infra/crypto.js');
    const password = given ?? randomPassword();
    const admin = args.values.admin === true;
    const user = await withInstance(ctx, ({ modules }) =>
      serviceCall(() =>
        modules.identity.users.create({
          username,
          email,
          name: optionalString(args, 'name') ?? username,
          password,
          admin,
          skip_confirmation: true,
        }),
      ),
    );
    ctx.out(`created user ${user.username} (id ${user.id}${admin ? ', administrator' : ''})`);
    if (given === undefined) ctx.out(`password: ${password}`);
    return 0;
  },
};

export const userResetPasswordCommand: CliCommand = {
  name: ['admin', 'user', 'reset-password'],
  summary: "Set a user's password (generated and printed when none is given) and end their sessions",
  usage: 'basalt admin user reset-password --username USERNAME [--password PASSWORD]',
  description:
    "Every browser session of the user ends, as when they change it themselves. Tokens are kept:\nrevoke them through the API or the user's settings if they may be known to someone else.",
  options: {
    username: USERNAME,
    password: {
      type: 'string',
      description: 'The new password, at least 8 characters (default: generated and printed)',
      valueName: 'PASSWORD',
    },
  },
  async run(args, ctx) {
    const given = optionalString(args, 'password');
    const { randomPassword } = await import('../infra/crypto.js');
    const password = given ?? randomPassword();
    const user = await withInstance(ctx, async (instance) => {
      const found = await findUser(instance, args);
      return serviceCall(() => instance.modules.identity.users.update(found.id, { password }));
    });
    ctx.out(`password of ${user.username} changed; their sessions have ended`);
    if (given === undefined) ctx.out(`password: ${password}`);
    return 0;
  },
};

function stateCommand(word: 'block' | 'unblock', state: 'blocked' | 'active', summary: string): CliCommand {
  return {
    name: ['admin', 'user', word],
    summary,
    usage: `basalt admin user ${word} --username USERNAME`,
    ...(word === 'block' ? { description: 'A blocked user cannot sign in or use any token; their OAuth authorizations end.' } : {}),
    options: { username: USERNAME },
    async run(args, ctx) {
      const user = await withInstance(ctx, async (instance) => {
        const found = await findUser(instance, args);
        return serviceCall(() => instance.modules.identity.users.setState(found.id, state));
      });
      ctx.out(`${user.username} is ${state}`);
      return 0;
    },
  };
}

export const userBlockCommand = stateCommand('block', 'blocked', 'Block a user');
export const userUnblockCommand = stateCommand('unblock', 'active', 'Unblock a user');

export const userMakeAdminCommand: CliCommand = {
  name: ['admin', 'user', 'make-admin'],
  summary: 'Make a user an administrator',
  usage: 'basalt admin user make-admin --username USERNAME',
  options: { username: USERNAME },
  async run(args, ctx) {
    const user = await withInstance(ctx, async (instance) => {
      const found = await findUser(instance, args);
      return serviceCall(() => instance.modules.identity.users.update(found.id, { admin: true }));
    });
    ctx.out(`${user.username} is an administrator`);
    return 0;
  },
};

export const adminUserCommands: readonly CliCommand[] = [
  userCreateCommand,
  userResetPasswordCommand,
  userBlockCommand,
  userUnblockCommand,
  userMakeAdminCommand,
];
