// Request generators for loads whose bodies differ per request (autocannon setupRequest).
// They run inside the load process, so they must be plain functions of their arguments.
import { randomUUID } from 'node:crypto';

type Request = { method?: string; path?: string; headers?: Record<string, string>; body?: string };
export type Factory = (args: Record<string, unknown>) => (request: Request) => Request;

/** A 2 KB JSON document with a field that changes every request. */
export function payload2k(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...extra, filler: 'x'.repeat(1900), id: randomUUID() };
}

export const factories: Record<string, Factory> = {
  /** A 2 KB JSON body, different each time (the insert baseline). */
  'json-2k': () => (request) => ({ ...request, body: JSON.stringify(payload2k()) }),
  /** A generic alert of about 2 KB whose payload (and so fingerprint) is new every time. */
  'alert-new': () => (request) => ({
    ...request,
    body: JSON.stringify(
      payload2k({ title: 'Disk almost full', severity: 'high', service: 'db', monitoring_tool: 'bench', hosts: ['db-1'] }),
    ),
  }),
  /** The same generic alert every time: grouped onto one open alert. */
  'alert-same': () => {
    const body = JSON.stringify({
      title: 'Disk almost full',
      severity: 'high',
      service: 'db',
      monitoring_tool: 'bench',
      filler: 'x'.repeat(1900),
    });
    return (request) => ({ ...request, body });
  },
};
