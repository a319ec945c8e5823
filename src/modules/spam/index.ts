import { noRootRoutes, noRoutes, type ModuleRoutes, type Platform } from '../../infra/platform.js';
import type { SpamModuleDeps } from './spam.deps.js';
import { SpamLogsRepository } from './spam.repository.js';
import { SpamService } from './spam.service.js';

export type { SpamModuleDeps } from './spam.deps.js';
export type { SpamChecker, SpamContext, Spammable } from './spam.service.js';
export { spamContextOf } from './spam.http.js';

/** No routes of its own: its checker answers other modules' writes. */
export interface SpamModule extends ModuleRoutes {
  /** The checker other modules call before storing user content. */
  readonly checker: SpamService;
}

/** Spam rules and CAPTCHA verification (SPEC "Errors" rule 5); configured by SPAM_* and CAPTCHA_*. */
export function createSpamModule(platform: Platform, _deps: SpamModuleDeps): SpamModule {
  return {
    checker: new SpamService(new SpamLogsRepository(platform.db), platform.clock, platform.config.spam, platform.config.captcha),
    routes: noRoutes,
    rootRoutes: noRootRoutes,
  };
}
