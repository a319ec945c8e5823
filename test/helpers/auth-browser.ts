import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/**
 * A cookie jar around `inject`, for tests that sign in through the page like a browser:
 * it keeps the cookies the server sets and sends them back, and reads CSRF tokens from pages.
 */
export class TestBrowser {
  readonly cookies = new Map<string, string>();

  constructor(
    private readonly app: FastifyInstance,
    private readonly remoteAddress = '127.0.0.1',
  ) {}

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    options: { form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    let payload: string | undefined;
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(options.form).toString();
    } else if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(options.json);
    }
    const res = await this.app.inject({
      method,
      url,
      headers,
      remoteAddress: this.remoteAddress,
      ...(payload !== undefined ? { payload } : {}),
    });
    for (const cookie of res.cookies) {
      const expired = (cookie.expires && cookie.expires.getTime() <= Date.now()) || cookie.maxAge === 0 || cookie.value === '';
      if (expired) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return res;
  }

  /** The `authenticity_token` of the first form on a page. */
  static csrfOf(html: string): string {
    const match = /name="authenticity_token" value="([^"]+)"/.exec(html);
    if (!match?.[1]) throw new Error('no CSRF token on the page');
    return match[1];
  }

  /** Fetches the sign-in page for its CSRF token, then posts the form. */
  async signIn(login: string, password: string, redirectTo?: string): Promise<LightMyRequestResponse> {
    const page = await this.request('GET', '/users/sign_in');
    // Signed in already: the page moves on, and any page's token serves the form.
    const token = page.statusCode === 302 ? await this.csrf() : TestBrowser.csrfOf(page.body);
    const form: Record<string, string> = {
      authenticity_token: token,
      'user[login]': login,
      'user[password]': password,
    };
    if (redirectTo !== undefined) form.redirect_to = redirectTo;
    return this.request('POST', '/users/sign_in', { form });
  }

  /** A CSRF token valid for the current cookies (read from the profile page). */
  async csrf(): Promise<string> {
    const page = await this.request('GET', '/profile');
    return TestBrowser.csrfOf(page.body);
  }
}
