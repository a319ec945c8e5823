import type { EpochTables } from '../../infra/db/index.js';

/**
 * What the `projects` epoch covers: project rows that other modules' cached lookups hold
 * (collector grants, alert receiver targets). A new project needs no bump: misses are never kept.
 */
export const PROJECTS_EPOCH_TABLES: EpochTables = {
  // A push or an action stamps its activity; that changes no cached answer.
  projects: { on: ['update', 'delete'], ignore: ['last_activity_at', 'updated_at'] },
};
