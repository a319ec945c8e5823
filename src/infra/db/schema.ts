import type { AlertsTables } from './tables/alerts.js';
import type { AuthTables } from './tables/auth.js';
import type { CacheEpochTables } from './tables/cache-epochs.js';
import type { CoreTables } from './tables/core.js';
import type { GitTables } from './tables/git.js';
import type { ErrorTrackingTables } from './tables/error-tracking.js';
import type { OAuthTables } from './tables/oauth.js';
import type { NotificationsEventsTables } from './tables/notifications-events.js';
import type { OutboxTables } from './tables/outbox.js';
import type { WebhooksTables } from './tables/webhooks.js';
import type { AuditTables } from './tables/audit.js';

/**
 * Every table, as Kysely sees it. Each area keeps its table types in its own file under
 * `tables/` and adds its interface here.
 */
export interface DB
  extends
    CoreTables,
    AuthTables,
    ErrorTrackingTables,
    AlertsTables,
    OAuthTables,
    NotificationsEventsTables,
    GitTables,
    CacheEpochTables,
    OutboxTables,
    WebhooksTables,
    AuditTables {}
