import type { CaptchaConfig } from '../../config/index.js';

const VERIFY_TIMEOUT_MS = 5_000;
const RESPONSE_MAX = 4_096;

/**
 * reCAPTCHA v2 verification (the only kind SPEC "Errors" rule 5 supports): POST
 * `secret`, `response` and `remoteip` form-encoded to the verify URL; the answer is JSON
 * with `success: true` when the person solved it. Any failure (network, timeout, not JSON)
 * counts as not solved.
 */
export async function verifyCaptcha(config: CaptchaConfig, response: string, remoteIp: string | null): Promise<boolean> {
  if (response.length === 0 || response.length > RESPONSE_MAX) return false;
  const form = new URLSearchParams({ secret: config.secret, response });
  if (remoteIp) form.set('remoteip', remoteIp);
  try {
    const answer = await fetch(config.verifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
    });
    if (!answer.ok) return false;
    const body = (await answer.json()) as { success?: unknown } | null;
    return body?.success === true;
  } catch {
    return false;
  }
}
