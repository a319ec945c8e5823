import type { CoreTables } from './tables/core.js';

/**
 * Every table, as Kysely sees it. Each area keeps its table types in its own file under
 * `tables/` and adds its interface here.
 */
export interface DB extends CoreTables {}
