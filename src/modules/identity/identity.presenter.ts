import { toIso, toIsoOrNull } from '../../infra/clock.js';
import type { TokenRow } from './tokens.repository.js';
import type { UserRow } from './users.repository.js';

/** Entity levels of reference §3.8: basic < user < public (self) < with admin. */
export function mapUserBasic(user: UserRow, baseUrl: string) {
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    state: user.state,
    locked: false,
    avatar_url: null,
    web_url: `${baseUrl}/${user.username}`,
  };
}

export function mapUser(user: UserRow, baseUrl: string) {
  return {
    ...mapUserBasic(user, baseUrl),
    created_at: toIso(user.created_at),
    bio: user.bio,
    location: '',
    public_email: user.public_email ?? '',
    skype: '',
    linkedin: '',
    twitter: '',
    discord: '',
    website_url: '',
    organization: '',
    job_title: '',
    pronouns: null,
    bot: user.bot === 1,
    work_information: null,
    followers: 0,
    following: 0,
    local_time: null,
  };
}

export function mapUserPublic(user: UserRow, baseUrl: string) {
  return {
    ...mapUser(user, baseUrl),
    last_sign_in_at: toIsoOrNull(user.last_sign_in_at),
    confirmed_at: toIsoOrNull(user.confirmed_at),
    last_activity_on: null,
    email: user.email,
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: 100000,
    current_sign_in_at: toIsoOrNull(user.current_sign_in_at),
    identities: [],
    can_create_group: true,
    can_create_project: true,
    two_factor_enabled: false,
    external: false,
    private_profile: user.private_profile === 1,
    commit_email: user.email,
  };
}

export function mapUserWithAdmin(user: UserRow, baseUrl: string) {
  return { ...mapUserPublic(user, baseUrl), is_admin: user.is_admin === 1, note: null };
}

const dateOnly = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString().slice(0, 10));

export function mapToken(row: TokenRow, now: number, secret?: string) {
  const expired = row.expires_at !== null && row.expires_at <= now;
  return {
    id: row.id,
    name: row.name,
    revoked: row.revoked === 1,
    created_at: toIso(row.created_at),
    scopes: row.scopes.split(' ').filter(Boolean),
    user_id: row.user_id,
    last_used_at: toIsoOrNull(row.last_used_at),
    active: row.revoked === 0 && !expired,
    expires_at: dateOnly(row.expires_at),
    ...(row.kind === 'impersonation' ? { impersonation: true } : {}),
    ...(row.access_level !== null ? { access_level: row.access_level } : {}),
    ...(secret ? { token: secret } : {}),
  };
}
