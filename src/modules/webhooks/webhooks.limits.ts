import type { Actor } from '../../infra/auth/index.js';
import type { HookRow } from './hooks.repository.js';

/**
 * The `RATE_LIMITS` name of hook tests (the established product's `web_hook_test`: 5 a minute),
 * counted per user and hook, on the API and the pages together.
 */
export const WEB_HOOK_TEST_LIMIT = 'web_hook_test';

export const webHookTestKey = (hook: Pick<HookRow, 'id'>, actor: Actor): string => `hook:${hook.id}:user:${actor.user.id}`;
