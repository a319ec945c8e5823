import type { RateLimit } from '../../config/index.js';
import type { TooManyRequestsError } from '../../infra/errors/index.js';
import type { RateLimiter } from '../../infra/http/index.js';
import type { CreatedSession, SessionsService } from './sessions.service.js';
import type { SignInAddresses } from './sign-in-addresses.service.js';
import type { UserRow } from './users.repository.js';
import type { UsersService } from './users.service.js';

export type SignInResult =
  | { kind: 'signed_in'; user: UserRow; session: CreatedSession }
  | { kind: 'invalid' }
  | { kind: 'blocked' }
  | { kind: 'throttled'; error: TooManyRequestsError };

export interface SignInAttempt {
  login: string;
  password: string;
  ip: string;
  userAgent: string | null;
  /** The cookie the browser came with; it is destroyed so every sign-in gets a new id (fixation). */
  previousSession: string | undefined;
}

const LIMIT = 'sign_in';

/**
 * Password sign-in. Failures are counted per IP and per login under the `sign_in` limit
 * (DESIGN.md §3): once either count reaches the limit, further attempts are refused with
 * 429 before the password is even checked, until the window ends. Each attempt takes its
 * count before the check and gives it back on success, so concurrent guesses cannot all slip
 * in before the first failure is counted (docs/decisions.md).
 */
export class SignInService {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly limiter: RateLimiter,
    private readonly limit: RateLimit | undefined,
    /** The addresses signed in from (the "new sign-in" mail); absent where a test builds the service alone. */
    private readonly addresses?: SignInAddresses,
  ) {}

  async signIn(attempt: SignInAttempt): Promise<SignInResult> {
    const keys = [`ip:${attempt.ip}`, `login:${attempt.login.trim().toLowerCase()}`];
    const reservation = await this.limiter.reserve(LIMIT, keys, this.limit);
    if (!reservation.allowed) return { kind: 'throttled', error: reservation.error };

    // A failure keeps the counts the reservation took.
    const user = attempt.login.length > 0 ? await this.users.authenticate(attempt.login.trim(), attempt.password) : null;
    // Bots (project and group token users) have no password anyone knows; never let them in.
    if (!user || user.bot === 1 || user.state === 'blocked') {
      await this.users.recordFailedSignIn(attempt.login.trim(), user, attempt.ip);
      return { kind: user && user.bot !== 1 ? 'blocked' : 'invalid' };
    }

    // Only failures count: the IP gets its count back, and the login's failures are forgiven.
    await reservation.release();
    if (this.limit) await this.limiter.store.reset(`${LIMIT}:${keys[1]}`);
    await this.sessions.destroy(attempt.previousSession);
    const session = await this.sessions.create(user.id, { ip: attempt.ip, userAgent: attempt.userAgent });
    await this.users.recordSignIn(user, attempt.ip);
    await this.addresses?.record(user.id, attempt.ip, attempt.userAgent);
    return { kind: 'signed_in', user, session };
  }

  /**
   * The current password, checked for a signed-in user changing it. Failures count under the
   * same limit as sign-in failures, per IP and per login: the form is another way to guess the
   * same secret, and a stolen session must not make guessing it cheaper.
   */
  async checkPassword(username: string, password: string, ip: string): Promise<'ok' | 'invalid' | TooManyRequestsError> {
    const keys = [`ip:${ip}`, `login:${username.toLowerCase()}`];
    const reservation = await this.limiter.reserve(LIMIT, keys, this.limit);
    if (!reservation.allowed) return reservation.error;
    if (!(await this.users.authenticate(username, password))) return 'invalid';
    await reservation.release();
    return 'ok';
  }

  async signOut(session: string | undefined): Promise<void> {
    await this.sessions.destroy(session);
  }
}
