import type { EpochTables } from '../../infra/db/index.js';

/**
 * What cached personal-token lookups (tokens.service.ts) are built from, for the
 * `credentials` epoch. A new row needs no bump: misses are never kept.
 */
export const IDENTITY_CREDENTIALS_TABLES: EpochTables = {
  // Each authenticated request stamps its token's use.
  personal_access_tokens: { on: ['update', 'delete'], ignore: ['last_used_at'] },
  // Kept session lookups (sessions.service.ts): a sign-out or a password change ends them; moving
  // the idle deadline does not (the service reads a kept row that looks expired again).
  sessions: { on: ['update', 'delete'], ignore: ['expires_at'] },
  // The lookups carry the owner's username, admin flag, state and bot flag; nothing else of the row.
  users: {
    on: ['update', 'delete'],
    ignore: [
      'name',
      'email',
      'email_lower',
      'password_hash',
      'private_profile',
      'bio',
      'public_email',
      'confirmed_at',
      'current_sign_in_at',
      'last_sign_in_at',
      'updated_at',
    ],
  },
};
