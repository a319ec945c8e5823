import type { MailTemplate } from './mail-template.rules.js';

/** Account mails sent whatever the notification levels say (the established product's). */
export type AccountMailFacts =
  | { kind: 'password_changed'; username: string; host: string; at: number }
  | { kind: 'new_sign_in'; username: string; name: string; host: string; at: number; ip: string; userAgent: string | null; url: string }
  | { kind: 'token_expiring'; username: string; host: string; at: number; tokenName: string; expiresAt: string; url: string }
  | {
      kind: 'token_created';
      username: string;
      host: string;
      at: number;
      tokenName: string;
      scopes: string[];
      expiresAt: string | null;
      url: string;
    };

export function accountSubject(facts: AccountMailFacts): string {
  if (facts.kind === 'password_changed') return 'Password changed';
  if (facts.kind === 'new_sign_in') return `${facts.host} sign-in from new location`;
  if (facts.kind === 'token_expiring') return 'Your personal access token will expire in 7 days or less';
  return 'A new personal access token has been created';
}

export function accountTemplate(facts: AccountMailFacts): Omit<MailTemplate, 'footer'> {
  const when = new Date(facts.at).toISOString().replace('T', ' ').slice(0, 16);
  if (facts.kind === 'password_changed') {
    return {
      lead: `The password of your account @${facts.username} on ${facts.host} was changed (${when} UTC).`,
      paragraphs: ['If you did not change it, reset your password now and tell an administrator.'],
    };
  }
  if (facts.kind === 'new_sign_in') {
    return {
      lead: `Hi ${facts.name}! A sign-in to your account @${facts.username} on ${facts.host} was made from an address it has not been used from before.`,
      facts: [
        ['IP address', facts.ip],
        ['Time', `${when} UTC`],
        ['Signed in with', 'password'],
        ...(facts.userAgent ? ([['Browser', facts.userAgent.slice(0, 300)]] as const) : []),
      ],
      paragraphs: ['If this was you, there is nothing to do. If it was not, change your password now and tell an administrator.'],
      link: { text: 'Change your password', url: facts.url },
    };
  }
  if (facts.kind === 'token_expiring') {
    return {
      lead: `Your personal access token "${facts.tokenName}" (account @${facts.username} on ${facts.host}) expires on ${facts.expiresAt}.`,
      paragraphs: ['Create a new token and use it where this one is used before then.'],
      link: { text: 'Your access tokens', url: facts.url },
    };
  }
  return {
    lead: `A personal access token named "${facts.tokenName}" was created for your account @${facts.username} on ${facts.host}.`,
    facts: [
      ['Scopes', facts.scopes.join(', ')],
      ['Expires', facts.expiresAt ?? 'never'],
      ['Created', `${when} UTC`],
    ],
    paragraphs: ['If you did not create it, revoke it now and tell an administrator.'],
    link: { text: 'Your access tokens', url: facts.url },
  };
}
