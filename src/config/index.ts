export { loadConfig, ConfigError, parseRateLimits, RATE_LIMIT_NAMES } from './config.js';
export type { Config, Tier, Offering, RateLimit, RateLimitName, SpamRules, CaptchaConfig } from './config.js';
export type { MailConfig } from './mail.js';
