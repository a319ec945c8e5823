import { accessSync, constants, mkdirSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { parseMail, type MailConfig } from './mail.js';
import { loadOrCreateSecrets } from './secrets.js';

export type Tier = 'free' | 'premium' | 'ultimate';
export type Offering = 'self_managed' | 'hosted';

export interface RateLimit {
  readonly count: number;
  readonly periodSeconds: number;
}

/** Every rate limit that has a name; an unnamed limit is off (DESIGN.md §3). */
export const RATE_LIMIT_NAMES = [
  'api_authenticated',
  'api_unauthenticated',
  'sign_in',
  'user_code',
  'oauth',
  'alerts',
  'alerts_project',
  'collector',
  'collector_project',
  'web_hook_test',
] as const;
export type RateLimitName = (typeof RATE_LIMIT_NAMES)[number];

export interface Config {
  readonly port: number;
  readonly host: string;
  /** `{base_url}` without a trailing slash. */
  readonly externalUrl: string;
  readonly dataDir: string;
  /** `null` selects SQLite in `dataDir`. */
  readonly databaseUrl: string | null;
  /** Overrides the SQLite file (tests use `:memory:` or a temp file). */
  readonly sqliteFile: string;
  /** PostgreSQL schema to use (tests give each file its own). */
  readonly databaseSchema: string | null;
  readonly redisUrl: string | null;
  readonly storages: Readonly<Record<string, string>>;
  readonly rootPassword: string | null;
  readonly rootToken: string | null;
  readonly tier: Tier;
  readonly offering: Offering;
  readonly rateLimits: Readonly<Partial<Record<RateLimitName, RateLimit>>>;
  readonly secretKeyBase: string;
  readonly impersonationEnabled: boolean;
  /** Longest life (days) of a new personal, impersonation, project or group token (the established product's 365). */
  readonly maxAccessTokenLifetimeDays: number;
  /** Largest request body accepted anywhere, in bytes. */
  readonly bodyLimit: number;
  readonly logLevel: string;
  /**
   * Which peers may say who the client is (`X-Forwarded-For`, `-Proto`, `-Host`): `false` (none),
   * a hop count, or addresses and CIDR ranges (Fastify's `trustProxy`). Per-IP limits key on the result.
   */
  readonly trustProxy: false | number | string;
  readonly workers: number;
  /** Whether this process runs the background job loop. */
  readonly runJobs: boolean;
  /** Whether the outbox's loop (mail, webhooks) runs on a thread of its own (src/outbox-thread.ts) in a process that runs jobs. */
  readonly outboxThread: boolean;
  /** Event-loop delay (ms) past which requests are shed with 503; 0 turns shedding off. */
  readonly loadShedDelayMs: number;
  /** Largest git push (receive-pack request body, after gzip decoding), in bytes. */
  readonly gitMaxPushBytes: number;
  /** Largest fetch negotiation (upload-pack request body, after gzip decoding), in bytes. */
  readonly gitMaxUploadPackBytes: number;
  /** `git http-backend` processes running at once for one client address, and in all. */
  readonly gitMaxConcurrencyPerIp: number;
  readonly gitMaxConcurrency: number;
  /** Seconds one `git http-backend` process (and its children) may run before it is killed. */
  readonly gitTimeoutSeconds: number;
  /** Seconds a request body may stay silent before the request is cut off with 408. */
  readonly requestBodyTimeoutSeconds: number;
  /** Days error-tracking events are kept (SPEC "Limits": 90). */
  readonly errorTrackingRetentionDays: number;
  /** Audit events older than this many days are deleted by a daily job (AUDIT_EVENTS_RETENTION_DAYS). */
  readonly auditEventsRetentionDays: number;
  /** Events one project may hold; past it the collector answers 429 and stores nothing. */
  readonly errorTrackingMaxEvents: number;
  /** A push with more refs of one kind than this becomes one bulk event (reference §2.6). */
  readonly pushEventActivitiesLimit: number;
  /** Prefix of every Redis key this instance writes (several instances may share one Redis). */
  readonly redisPrefix: string;
  /** Spam rules for issue and snippet titles and descriptions (SPEC "Errors" rule 5); empty: off. */
  readonly spam: SpamRules;
  /** reCAPTCHA v2 service; `null` when not configured. */
  readonly captcha: CaptchaConfig | null;
  /** A browser session unused this long (minutes) ends (the established product's `session_expire_delay`). */
  readonly sessionIdleTimeoutMinutes: number;
  /** A browser session ends this many days after sign-in, however active it is. */
  readonly sessionMaxLifetimeDays: number;
  /** CIDR ranges whose clients may read `/-/metrics` and readiness details; others get 404. */
  readonly monitoringAllowlist: readonly string[];
  /** Outgoing mail; `null` (SMTP_URL unset) sends nothing (src/config/mail.ts). */
  readonly mail: MailConfig | null;
  /** Seconds an outbox item being sent is held by its process before another may retry it (renewed while in flight). */
  readonly outboxLeaseSeconds: number;
  /** Parts of mail (and deliveries) the outbox sends a second while requests keep the process busy. */
  readonly outboxBusyPerSecond: number;
  /** Whether webhooks may reach loopback, private and link-local addresses (the established product's setting; off). */
  readonly webhookAllowLocalNetwork: boolean;
}

export interface SpamRules {
  /** Case-insensitive phrases; content containing one is spam. */
  readonly blockedPatterns: readonly string[];
  /** More links than this in one submission is spam; `null`: no limit. */
  readonly maxLinks: number | null;
}

export interface CaptchaConfig {
  readonly siteKey: string;
  readonly secret: string;
  /** reCAPTCHA v2 `siteverify` endpoint (form POST of `secret` and `response`). */
  readonly verifyUrl: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const PERIODS: Record<string, number> = { s: 1, m: 60, h: 3600 };
// The public ingestion doors (the DSN key is public by design) are limited by default: per
// client address and key or integration, and a higher ceiling per project (docs/decisions.md).
// A hook's test sends a request from this server to an address its owner chose: 5 a minute per
// user and hook, the established product's `web_hook_test`.
const DEFAULT_RATE_LIMITS =
  'sign_in=10/m,user_code=10/m,alerts=25/m,alerts_project=300/m,collector=25/m,collector_project=600/m,web_hook_test=5/m';

export function parseRateLimits(text: string, problems: string[]): Partial<Record<RateLimitName, RateLimit>> {
  const limits: Partial<Record<RateLimitName, RateLimit>> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    // A count or a period of 0 would refuse everything or never reset: both must be at least 1.
    const match = /^([a-z_]+)=([1-9]\d{0,8})\/([1-9]\d{0,5})?([smh])$/.exec(part);
    const name = match?.[1] as RateLimitName | undefined;
    if (!match || !name || !RATE_LIMIT_NAMES.includes(name)) {
      problems.push(
        `RATE_LIMITS: "${part}" is not name=count/period with a name of ${RATE_LIMIT_NAMES.join(', ')}, a count of at least 1 and a period in s, m or h (10/m, 100/5m)`,
      );
      continue;
    }
    const multiple = match[3] ? Number(match[3]) : 1;
    limits[name] = { count: Number(match[2]), periodSeconds: multiple * (PERIODS[match[4] ?? 's'] ?? 1) };
  }
  return limits;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const PROXY_ADDRESS = /^(?:[0-9.]+|[0-9a-fA-F:.]+)(?:\/\d{1,3})?$/;

/** TRUST_PROXY: unset or empty trusts nobody; a hop count; or addresses, CIDR ranges and proxy-addr's names. */
export function parseTrustProxy(text: string | undefined, problems: string[]): false | number | string {
  const value = (text ?? '').trim();
  if (value === '') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops >= 1 && hops <= 16) return hops;
  } else {
    const parts = value.split(',').map((p) => p.trim());
    if (parts.every((p) => PROXY_NAMES.has(p) || (PROXY_ADDRESS.test(p) && /\d/.test(p)))) return parts.join(',');
  }
  problems.push("TRUST_PROXY: give the proxies' addresses or CIDR ranges (10.0.0.0/8,127.0.0.1), loopback, or a hop count 1-16");
  return false;
}

function parseStorages(text: string, problems: string[]): Record<string, string> {
  const storages: Record<string, string> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq);
    const dir = part.slice(eq + 1);
    if (eq < 1 || !/^[a-z0-9_-]+$/i.test(name) || !dir) {
      problems.push(`STORAGES: "${part}" is not name=path`);
      continue;
    }
    if (storages[name]) problems.push(`STORAGES: storage "${name}" is named twice`);
    storages[name] = path.resolve(dir);
  }
  if (Object.keys(storages).length === 0) problems.push('STORAGES: at least one storage is needed');
  return storages;
}

/** Directories the server creates (data, storages) are its own alone: they hold the database, secrets and repositories. */
function ensureWritableDir(dir: string, label: string, problems: string[]): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    problems.push(`${label}: ${dir} is not a writable directory (${(error as Error).message})`);
  }
}

function parseInteger(env: Env, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    problems.push(`${name}: "${raw}" is not a whole number from ${min} to ${max}`);
    return fallback;
  }
  return value;
}

/**
 * Refs of one kind per push that get their own push event. Each costs git work while the push
 * is answered (commit count and title), so the limit bounds that work per push (docs/decisions.md).
 */
const MAX_PUSH_EVENT_ACTIVITIES_LIMIT = 50;

function parsePushEventActivitiesLimit(env: Env, problems: string[]): number {
  const name = 'PUSH_EVENT_ACTIVITIES_LIMIT';
  const raw = env[name];
  const value = Number(raw);
  if (raw !== undefined && raw !== '' && Number.isInteger(value) && value > MAX_PUSH_EVENT_ACTIVITIES_LIMIT) {
    problems.push(
      `${name}: "${raw}" is above ${MAX_PUSH_EVENT_ACTIVITIES_LIMIT}, the most refs of one kind per push that get their own push events (the git work per push stays bounded)`,
    );
    return 3;
  }
  return parseInteger(env, name, 3, 0, MAX_PUSH_EVENT_ACTIVITIES_LIMIT, problems);
}

const DEFAULT_MONITORING_ALLOWLIST = '127.0.0.0/8,::1/128';
/**
 * Mail a second while requests keep a process busy: each mail costs the process 1–2 ms of CPU
 * (composing, SMTP, the outbox's writes), taken from the requests of a burst (docs/performance.md "Mail").
 */
const DEFAULT_OUTBOX_BUSY_PER_SECOND = 8;

/** MONITORING_ALLOWLIST: addresses or CIDR ranges, IPv4 or IPv6; a bare address is its own /32 or /128. */
export function parseMonitoringAllowlist(text: string, problems: string[]): string[] {
  const ranges: string[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [address = '', prefix, extra] = part.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (family === 0 || extra !== undefined || bits < 0 || bits > (family === 6 ? 128 : 32)) {
      problems.push(`MONITORING_ALLOWLIST: "${part}" is not an IP address or CIDR range (127.0.0.0/8, ::1/128)`);
      continue;
    }
    ranges.push(`${address}/${bits}`);
  }
  return ranges;
}

function parseChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T, problems: string[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if ((choices as readonly string[]).includes(raw)) return raw as T;
  problems.push(`${name}: "${raw}" is not one of ${choices.join(', ')}`);
  return fallback;
}

function parseBoolean(env: Env, name: string, fallback: boolean, problems: string[]): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  problems.push(`${name}: "${env[name]}" is not true or false`);
  return fallback;
}

function parseExternalUrl(raw: string, problems: string[]): string {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme must be http or https');
    if (url.search || url.hash) throw new Error('no query or fragment allowed');
    return url.toString().replace(/\/+$/, '');
  } catch (error) {
    problems.push(`EXTERNAL_URL: "${raw}" is not a usable http(s) URL (${(error as Error).message})`);
    return 'http://localhost';
  }
}

function parseSpamRules(env: Env, problems: string[]): SpamRules {
  const blockedPatterns = (env.SPAM_BLOCKED_PATTERNS ?? '')
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  if (blockedPatterns.length > 1000 || blockedPatterns.some((p) => p.length > 200)) {
    problems.push('SPAM_BLOCKED_PATTERNS: at most 1000 phrases of at most 200 characters');
  }
  const maxLinks = env.SPAM_MAX_LINKS ? parseInteger(env, 'SPAM_MAX_LINKS', 0, 0, 100_000, problems) : null;
  return Object.freeze({ blockedPatterns: Object.freeze(blockedPatterns), maxLinks });
}

function parseCaptcha(env: Env, problems: string[]): CaptchaConfig | null {
  const siteKey = env.CAPTCHA_SITE_KEY || '';
  const secret = env.CAPTCHA_SECRET || '';
  if (!siteKey && !secret) return null;
  if (!siteKey || !secret) {
    problems.push('CAPTCHA_SITE_KEY and CAPTCHA_SECRET: set both or neither');
    return null;
  }
  const verifyUrl = env.CAPTCHA_VERIFY_URL || 'https://www.google.com/recaptcha/api/siteverify';
  if (!/^https?:\/\/\S+$/.test(verifyUrl)) problems.push('CAPTCHA_VERIFY_URL: must be an http(s) URL');
  return Object.freeze({ siteKey, secret, verifyUrl });
}

/**
 * Reads every variable of DESIGN.md §3 once. All problems are collected and thrown
 * together so an operator fixes them in one go.
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const port = parseInteger(env, 'PORT', 8080, 0, 65535, problems);
  const host = env.HOST || '127.0.0.1';
  const dataDir = path.resolve(env.DATA_DIR || './data');
  ensureWritableDir(dataDir, 'DATA_DIR', problems);
  const externalUrl = parseExternalUrl(env.EXTERNAL_URL || `http://localhost:${port}`, problems);
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL: only postgres:// URLs are supported (leave it unset for SQLite)');
  }
  const redisUrl = env.REDIS_URL || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL: must start with redis:// or rediss://');
  const storages = parseStorages(env.STORAGES || `default=${path.join(dataDir, 'repositories')}`, problems);
  for (const [name, dir] of Object.entries(storages)) ensureWritableDir(dir, `STORAGES (${name})`, problems);
  const rootToken = env.BASALT_ROOT_TOKEN || null;
  if (rootToken !== null && rootToken.length < 20) problems.push('BASALT_ROOT_TOKEN: must be at least 20 characters');
  const rootPassword = env.BASALT_ROOT_PASSWORD || null;
  if (rootPassword !== null && rootPassword.length < 8) problems.push('BASALT_ROOT_PASSWORD: must be at least 8 characters');
  const tier = parseChoice(env, 'BASALT_TIER', ['free', 'premium', 'ultimate'] as const, 'ultimate', problems);
  const offering = parseChoice(env, 'BASALT_OFFERING', ['self_managed', 'hosted'] as const, 'self_managed', problems);
  // Set but empty turns every limit off (the bench and some tests do); unset keeps the defaults.
  const rateLimits = parseRateLimits(env.RATE_LIMITS ?? DEFAULT_RATE_LIMITS, problems);
  const trustProxy = parseTrustProxy(env.TRUST_PROXY, problems);
  const impersonationEnabled = parseBoolean(env, 'BASALT_IMPERSONATION_ENABLED', true, problems);
  const maxAccessTokenLifetimeDays = parseInteger(env, 'MAX_ACCESS_TOKEN_LIFETIME_DAYS', 365, 1, 3650, problems);
  const bodyLimit = parseInteger(env, 'BODY_LIMIT', 1024 * 1024, 1024, 512 * 1024 * 1024, problems);
  const workers = parseInteger(env, 'WORKERS', 1, 1, 64, problems);
  const runJobs = parseBoolean(env, 'RUN_JOBS', true, problems);
  const outboxThread = parseBoolean(env, 'OUTBOX_THREAD', true, problems);
  const loadShedDelayMs = parseInteger(env, 'LOAD_SHED_EVENT_LOOP_DELAY_MS', 1000, 0, 60_000, problems);
  const gitMaxPushBytes = parseInteger(env, 'GIT_MAX_PUSH_SIZE', 500 * 1024 * 1024, 1024, 64 * 1024 * 1024 * 1024, problems);
  const gitMaxUploadPackBytes = parseInteger(env, 'GIT_MAX_UPLOAD_PACK_SIZE', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024, problems);
  const gitMaxConcurrency = parseInteger(env, 'GIT_MAX_CONCURRENCY', 32, 1, 10_000, problems);
  const gitMaxConcurrencyPerIp = parseInteger(env, 'GIT_MAX_CONCURRENCY_PER_IP', 8, 1, 10_000, problems);
  if (gitMaxConcurrencyPerIp > gitMaxConcurrency) problems.push('GIT_MAX_CONCURRENCY_PER_IP: must not be above GIT_MAX_CONCURRENCY');
  const gitTimeoutSeconds = parseInteger(env, 'GIT_TIMEOUT_SECONDS', 3600, 1, 7 * 86_400, problems);
  const requestBodyTimeoutSeconds = parseInteger(env, 'REQUEST_BODY_TIMEOUT_SECONDS', 30, 1, 3600, problems);
  const errorTrackingRetentionDays = parseInteger(env, 'ERROR_TRACKING_RETENTION_DAYS', 90, 1, 3650, problems);
  const auditEventsRetentionDays = parseInteger(env, 'AUDIT_EVENTS_RETENTION_DAYS', 365, 1, 36_500, problems);
  const errorTrackingMaxEvents = parseInteger(env, 'ERROR_TRACKING_MAX_EVENTS', 100_000, 1, 100_000_000, problems);
  const pushEventActivitiesLimit = parsePushEventActivitiesLimit(env, problems);
  const redisPrefix = env.REDIS_PREFIX ?? 'basalt:';
  if (!/^[A-Za-z0-9:_.-]{0,64}$/.test(redisPrefix)) problems.push('REDIS_PREFIX: use up to 64 letters, digits, ":", "_", "." or "-"');
  const spam = parseSpamRules(env, problems);
  const captcha = parseCaptcha(env, problems);
  const sessionIdleTimeoutMinutes = parseInteger(env, 'SESSION_IDLE_TIMEOUT_MINUTES', 10_080, 1, 525_600, problems);
  const sessionMaxLifetimeDays = parseInteger(env, 'SESSION_MAX_LIFETIME_DAYS', 30, 1, 3650, problems);
  const webhookAllowLocalNetwork = parseBoolean(env, 'WEBHOOK_ALLOW_LOCAL_NETWORK', false, problems);
  const mail = parseMail(env, problems);
  const outboxLeaseSeconds = parseInteger(env, 'OUTBOX_LEASE_SECONDS', 30, 1, 3600, problems);
  const outboxBusyPerSecond = parseInteger(env, 'OUTBOX_BUSY_PER_SECOND', DEFAULT_OUTBOX_BUSY_PER_SECOND, 1, 1000, problems);
  const monitoringAllowlist = parseMonitoringAllowlist(env.MONITORING_ALLOWLIST ?? DEFAULT_MONITORING_ALLOWLIST, problems);
  const logLevel = parseChoice(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info', problems);
  let secretKeyBase = env.SECRET_KEY_BASE || '';
  if (secretKeyBase && secretKeyBase.length < 32) problems.push('SECRET_KEY_BASE: must be at least 32 characters');
  if (problems.length > 0) throw new ConfigError(problems);
  if (!secretKeyBase) secretKeyBase = loadOrCreateSecrets(dataDir).secretKeyBase;

  return Object.freeze({
    port,
    host,
    externalUrl,
    dataDir,
    databaseUrl,
    sqliteFile: path.join(dataDir, 'basalt.sqlite3'),
    databaseSchema: null,
    redisUrl,
    storages: Object.freeze(storages),
    rootPassword,
    rootToken,
    tier,
    offering,
    rateLimits: Object.freeze(rateLimits),
    secretKeyBase,
    impersonationEnabled,
    maxAccessTokenLifetimeDays,
    bodyLimit,
    logLevel,
    trustProxy,
    workers,
    runJobs,
    outboxThread,
    loadShedDelayMs,
    gitMaxPushBytes,
    gitMaxUploadPackBytes,
    gitMaxConcurrency,
    gitMaxConcurrencyPerIp,
    gitTimeoutSeconds,
    requestBodyTimeoutSeconds,
    errorTrackingRetentionDays,
    auditEventsRetentionDays,
    errorTrackingMaxEvents,
    pushEventActivitiesLimit,
    redisPrefix,
    spam,
    captcha,
    sessionIdleTimeoutMinutes,
    sessionMaxLifetimeDays,
    monitoringAllowlist: Object.freeze(monitoringAllowlist),
    mail,
    outboxLeaseSeconds,
    outboxBusyPerSecond,
    webhookAllowLocalNetwork,
    ...overrides,
  });
}
