import type { CaptchaConfig, SpamRules } from '../../config/index.js';
import type { Clock } from '../../infra/clock.js';
import { CustomBodyError } from '../../infra/errors/index.js';
import { verifyCaptcha } from './captcha.service.js';
import type { SpamLogsRepository } from './spam.repository.js';

export type Spammable = 'issue' | 'snippet' | 'note';

/** Who submits, from where, and a CAPTCHA answer when this is a resubmission. */
export interface SpamContext {
  readonly userId: number;
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly captchaResponse?: string | undefined;
  readonly spamLogId?: number | undefined;
}

/** What the projects module calls before it stores user content. */
export interface SpamChecker {
  check(kind: Spammable, content: { title: string; description: string }, context: SpamContext): Promise<void>;
}

const LINK = /\bhttps?:\/\/[^\s<>"')\]]+/gi;
const LOGGED_TEXT_MAX = 10_000;
const NOTEABLE: Record<Spammable, string> = { issue: 'Issue', snippet: 'Snippet', note: 'Note' };

/**
 * The spam rules of SPEC "Errors" rule 5: blocked phrases and a link limit, both from
 * configuration. A caught submission is logged in `spam_logs`; without a CAPTCHA service it
 * is discarded (400), with one the client may solve a CAPTCHA and resubmit (409).
 */
export class SpamService implements SpamChecker {
  constructor(
    private readonly logs: SpamLogsRepository,
    private readonly clock: Clock,
    private readonly rules: SpamRules,
    private readonly captcha: CaptchaConfig | null,
  ) {}

  get enabled(): boolean {
    return this.rules.blockedPatterns.length > 0 || this.rules.maxLinks !== null;
  }

  /** Why the content is spam, or null. Plain substring and link counting: linear in the input. */
  reason(content: { title: string; description: string }): string | null {
    const text = `${content.title}\n${content.description}`.toLowerCase();
    const phrase = this.rules.blockedPatterns.find((p) => text.includes(p));
    if (phrase !== undefined) return `blocked phrase "${phrase}"`;
    if (this.rules.maxLinks !== null) {
      const links = text.match(LINK)?.length ?? 0;
      if (links > this.rules.maxLinks) return `${links} links (at most ${this.rules.maxLinks})`;
    }
    return null;
  }

  async check(kind: Spammable, content: { title: string; description: string }, context: SpamContext): Promise<void> {
    if (!this.enabled) return;
    const reason = this.reason(content);
    if (reason === null) return;
    if (this.captcha && (await this.solved(kind, context, this.captcha))) return;

    const log = await this.logs.insert({
      userId: context.userId,
      noteableType: NOTEABLE[kind],
      title: content.title.slice(0, 255),
      description: content.description.slice(0, LOGGED_TEXT_MAX),
      reason,
      sourceIp: context.ip,
      userAgent: context.userAgent?.slice(0, 512) ?? null,
      now: this.clock.now(),
    });
    if (!this.captcha) {
      throw new CustomBodyError(
        400,
        { message: { error: `Your ${kind} has been recognized as spam and has been discarded.` } },
        'spam_detected',
      );
    }
    throw new CustomBodyError(
      409,
      {
        needs_captcha_response: true,
        spam_log_id: log.id,
        captcha_site_key: this.captcha.siteKey,
        message: { error: `Your ${kind} has been recognized as spam. Please, change the content or solve the reCAPTCHA to proceed.` },
      },
      'spam_captcha_required',
    );
  }

  /** A resubmission passes once: its spam log is the caller's, unused, and the CAPTCHA service says solved. */
  private async solved(kind: Spammable, context: SpamContext, captcha: CaptchaConfig): Promise<boolean> {
    if (context.captchaResponse === undefined || context.spamLogId === undefined) return false;
    const log = await this.logs.findById(context.spamLogId);
    if (!log || log.user_id !== context.userId || log.noteable_type !== NOTEABLE[kind] || log.recaptcha_verified === 1) return false;
    if (!(await verifyCaptcha(captcha, context.captchaResponse, context.ip))) return false;
    return this.logs.markVerified(log.id);
  }
}
