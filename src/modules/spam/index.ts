import type { Platform } from '../../infra/platform.js';
import { SpamService } from './spam.service.js';

export type { SpamChecker, SpamContext, Spammable } from './spam.service.js';
export { spamContextOf } from './spam.http.js';

export interface SpamModule {
  /** The checker other modules call before storing user content. */
  readonly checker: SpamService;
}

/** Spam rules and CAPTCHA verification (SPEC "Errors" rule 5); configured by SPAM_* and CAPTCHA_*. */
export function createSpamModule(platform: Platform): SpamModule {
  return { checker: new SpamService(platform.db, platform.clock, platform.config.spam, platform.config.captcha) };
}
