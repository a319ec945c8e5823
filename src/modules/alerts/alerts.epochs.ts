import type { EpochTables } from '../../infra/db/index.js';

/** What cached receiver targets (targets.service.ts) are built from, for the `alerts` epoch. */
export const ALERTS_EPOCH_TABLES: EpochTables = {
  alert_integrations: {},
  alert_settings: {},
};
