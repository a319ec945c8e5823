import type { FastifyRequest } from 'fastify';
import type { SpamContext } from './spam.service.js';

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The spam context of an API request: caller, address, and the resubmission headers of SPEC "Errors" rule 5. */
export function spamContextOf(request: FastifyRequest, userId: number): SpamContext {
  const logId = headerValue(request, 'x-service-spam-log-id');
  const userAgent = headerValue(request, 'user-agent');
  return {
    userId,
    ip: request.ip,
    userAgent: userAgent ?? null,
    captchaResponse: headerValue(request, 'x-service-captcha-response'),
    spamLogId: logId && /^\d{1,15}$/.test(logId) ? Number(logId) : undefined,
  };
}
