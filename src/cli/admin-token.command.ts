import { CliError, optionalString, requireString, type CliCommand } from './command.js';
import { asCliError, withInstance } from './instance.js';

export const tokenCreateCommand: CliCommand = {
  name: ['admin', 'token', 'create'],
  summary: 'Create a personal access token for a user (prints it once)',
  usage: 'basalt admin token create --username USERNAME --scopes api,read_user [--expires-at YYYY-MM-DD] [--name NAME]',
  description:
    'The token acts as the user. It expires on --expires-at, at the latest (and by default)\nMAX_ACCESS_TOKEN_LIFETIME_DAYS from today. The secret is printed once, alone on stdout.',
  options: {
    username: { type: 'string', description: 'The owner (username, case-insensitive)', valueName: 'USERNAME' },
    scopes: { type: 'string', description: 'Comma-separated scopes (api, read_api, read_user, read_repository, …)', valueName: 'SCOPES' },
    'expires-at': { type: 'string', description: 'Expiry date, UTC (default: the longest lifetime allowed)', valueName: 'YYYY-MM-DD' },
    name: { type: 'string', description: 'Token name (default: basalt-cli)', valueName: 'NAME' },
  },
  async run(args, ctx) {
    const username = requireString(args, 'username');
    const scopes = requireString(args, 'scopes')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const name = optionalString(args, 'name') ?? 'basalt-cli';
    if (name.length > 255) throw new CliError('--name is longer than 255 characters');
    const created = await withInstance(ctx, async ({ modules }) => {
      const user = await modules.identity.users.findByUsername(username);
      if (!user) throw new CliError(`no user named "${username}"`);
      if (user.bot === 1) throw new CliError(`"${user.username}" is a bot user: its token is made with its project or group`);
      try {
        return await modules.identity.tokens.create(
          user.id,
          'personal',
          { name, scopes, expires_at: optionalString(args, 'expires-at') ?? null },
          { createdById: null },
        );
      } catch (error) {
        throw await asCliError(error);
      }
    });
    const expires = created.row.expires_at === null ? 'never' : new Date(created.row.expires_at).toISOString().slice(0, 10);
    ctx.err(`created token "${created.row.name}" (id ${created.row.id}) for ${username}: scopes ${scopes.join(',')}, expires ${expires}`);
    ctx.out(created.token);
    return 0;
  },
};
