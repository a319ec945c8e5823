import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomPassword } from '../../infra/crypto.js';
import type { Platform } from '../../infra/platform.js';
import type { TokensService } from './tokens.service.js';
import type { UsersService } from './users.service.js';

const ROOT_TOKEN_SCOPES = ['api', 'read_user', 'sudo', 'admin_mode', 'read_repository', 'write_repository'];

/**
 * First start: creates `root` (admin) with BASALT_ROOT_PASSWORD or a generated password
 * written to DATA_DIR/initial_root_password (0600), and BASALT_ROOT_TOKEN as its token.
 */
export async function bootstrapRoot(platform: Platform, users: UsersService, tokens: TokensService): Promise<void> {
  const { config, log } = platform;
  let root = await users.findByUsername('root');
  if (!root) {
    const password = config.rootPassword ?? randomPassword();
    try {
      root = await users.create({ username: 'root', name: 'Administrator', email: 'admin@example.com', password, admin: true });
    } catch (error) {
      // Another process bootstrapped at the same moment.
      root = await users.findByUsername('root');
      if (!root) throw error;
      return;
    }
    if (!config.rootPassword) {
      const file = path.join(config.dataDir, 'initial_root_password');
      writeFileSync(file, `${password}\n`, { mode: 0o600 });
      log.info({ file }, 'created user root; its generated password is in this file');
    } else {
      log.info('created user root with the password from BASALT_ROOT_PASSWORD');
    }
  }
  if (config.rootToken && !(await tokens.resolve(config.rootToken))) {
    await tokens.create(
      root.id,
      'personal',
      { name: 'BASALT_ROOT_TOKEN', scopes: ROOT_TOKEN_SCOPES },
      { createdById: root.id, secret: config.rootToken, operatorToken: true },
    );
  }
}
