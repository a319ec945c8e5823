import type { EpochTables } from '../../infra/db/index.js';

/** What cached collector grants (settings.service.ts) are built from, for the `error-tracking` epoch. */
export const ERROR_TRACKING_EPOCH_TABLES: EpochTables = {
  error_tracking_settings: {},
  error_tracking_client_keys: {},
};
