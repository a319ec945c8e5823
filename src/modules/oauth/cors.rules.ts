import type { CorsRule } from '../../infra/http/index.js';

/**
 * SPEC "CORS" and reference §2.11: any origin, never credentials, a short allow-list of
 * request headers (`X-Requested-With` is not on it). A preflight that asks for more gets no
 * CORS headers, so the browser refuses the request.
 */
export const CORS = {
  token: { methods: ['POST', 'OPTIONS'], headers: ['Authorization'] },
  tokenInfo: { methods: ['GET', 'HEAD', 'OPTIONS'], headers: ['Authorization'] },
  userinfo: { methods: ['GET', 'HEAD', 'POST', 'OPTIONS'], headers: ['Authorization'] },
  discovery: { methods: ['GET', 'HEAD', 'OPTIONS'], headers: [] },
} as const satisfies Record<string, CorsRule>;
