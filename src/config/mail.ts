/** Outgoing mail (SMTP_URL, EMAIL_FROM, EMAIL_REPLY_TO); `null` when SMTP_URL is unset: nothing is sent. */
export interface MailConfig {
  /** `smtp://` (STARTTLS when the server offers it) or `smtps://` (TLS from the start); credentials in the userinfo. */
  readonly smtpUrl: string;
  readonly from: string;
  readonly replyTo: string | null;
}

type Env = Record<string, string | undefined>;

// An address as a mail header takes it: `user@host` or `Name <user@host>`; no line breaks.
const ADDRESS = /^(?:[^<>\r\n]{0,200}<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/;

/** Reads the mail variables; problems go to `problems` with the other configuration errors. */
export function parseMail(env: Env, problems: string[]): MailConfig | null {
  const smtpUrl = env.SMTP_URL || '';
  const from = env.EMAIL_FROM || '';
  const replyTo = env.EMAIL_REPLY_TO || null;
  if (!smtpUrl) {
    if (from || replyTo) problems.push('EMAIL_FROM / EMAIL_REPLY_TO: set SMTP_URL too (without it no mail is sent)');
    return null;
  }
  let url: URL | null = null;
  try {
    url = new URL(smtpUrl);
  } catch {
    problems.push('SMTP_URL: not a URL (smtp://user:password@host:587 or smtps://host:465)');
  }
  if (url) {
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
      problems.push(`SMTP_URL: scheme must be smtp or smtps, not ${url.protocol.replace(':', '')}`);
    if (!url.hostname) problems.push('SMTP_URL: no host');
    if (url.pathname && url.pathname !== '/' && url.pathname !== '') problems.push('SMTP_URL: no path allowed');
  }
  if (!from) problems.push('EMAIL_FROM: required when SMTP_URL is set (e.g. "Basalt <basalt@example.com>")');
  else if (!ADDRESS.test(from)) problems.push(`EMAIL_FROM: "${from}" is not an e-mail address`);
  if (replyTo !== null && !ADDRESS.test(replyTo)) problems.push(`EMAIL_REPLY_TO: "${replyTo}" is not an e-mail address`);
  return Object.freeze({ smtpUrl, from, replyTo });
}
