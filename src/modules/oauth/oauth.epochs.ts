import type { EpochTables } from '../../infra/db/index.js';

/**
 * What cached OAuth access-token lookups (tokens.service.ts) are built from, for the
 * `credentials` epoch. A new token needs no bump (misses are never kept), so a grant or a
 * refresh's new token costs no cached lookup; the refresh's rotation of the old one does.
 * The owners' rows feed the same epoch through the identity module's declaration.
 */
export const OAUTH_CREDENTIALS_TABLES: EpochTables = {
  oauth_access_tokens: { on: ['update', 'delete'] },
  // Deleting an application deletes its tokens (ON DELETE CASCADE); its other columns are not cached.
  oauth_applications: { on: ['delete'] },
};
