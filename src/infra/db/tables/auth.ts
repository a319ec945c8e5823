import type { Generated } from 'kysely';
import type { Flag, Millis } from './core.js';

/** Browser sessions: the `_service_session` cookie holds a random id stored only as its SHA-256 digest. */
export interface SessionsTable {
  id: Generated<number>;
  session_digest: string;
  user_id: number;
  ip: string | null;
  user_agent: string | null;
  created_at: Millis;
  expires_at: Millis;
}

/** CI jobs registered by a runner; each carries one job token (`bsj_`, digest only). */
export interface CiJobsTable {
  id: Generated<number>;
  project_id: number;
  user_id: number;
  token_digest: string;
  name: string;
  ref: string;
  status: Generated<'running' | 'success' | 'failed'>;
  created_at: Millis;
  finished_at: Millis | null;
}

/** Submissions the spam rules caught; a solved CAPTCHA marks one verified, once. */
export interface SpamLogsTable {
  id: Generated<number>;
  user_id: number;
  noteable_type: string;
  title: string;
  description: string;
  reason: string;
  source_ip: string | null;
  user_agent: string | null;
  recaptcha_verified: Generated<Flag>;
  created_at: Millis;
}

/** Addresses a user signed in from with a password (migration 0019): a new one sends the "new sign-in" mail. */
export interface UserSignInAddressesTable {
  user_id: number;
  ip: string;
  first_seen_at: Millis;
  last_seen_at: Millis;
}

export interface AuthTables {
  sessions: SessionsTable;
  user_sign_in_addresses: UserSignInAddressesTable;
  ci_jobs: CiJobsTable;
  spam_logs: SpamLogsTable;
}
