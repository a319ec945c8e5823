import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { LOCAL_NETWORK_REFUSED, addressLiteral, isLocalAddress } from './address.rules.js';

/** Seconds a receiver has to answer (the established product's default webhook timeout). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Response body bytes read and kept; the rest is not read. */
export const RESPONSE_BODY_LIMIT = 8 * 1024;

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  verifyTls: boolean;
}

export type DeliveryOutcome =
  | { ok: true; status: number; headers: Record<string, string>; body: string; durationMs: number }
  | { ok: false; status: number | null; headers: Record<string, string>; body: string; durationMs: number; error: string };

/** A target refused before any connection (bad address, local network). */
export class RefusedTarget extends Error {}

/**
 * Resolves the host once and hands the socket only an address that passed the check: the
 * connection goes to that address (the Host header and TLS server name stay the URL's), so a
 * name that answers differently a moment later (DNS rebinding) cannot lead inside.
 */
export function guardedLookup(allowLocal: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const usable = addresses.filter((a) => allowLocal || !isLocalAddress(a.address));
      const first = usable[0];
      if (!first) return callback(new RefusedTarget(addresses.length > 0 ? LOCAL_NETWORK_REFUSED : 'Host cannot be resolved'), '', 0);
      // Every address the name has must be allowed: one bad answer means the name is not trusted.
      if (usable.length !== addresses.length) return callback(new RefusedTarget(LOCAL_NETWORK_REFUSED), '', 0);
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [first]);
      else callback(null, first.address, first.family);
    });
  };
}

function headerRecord(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** One POST to a hook's URL: no redirects followed, bounded in time and in what is read back. */
export class DeliveryClient {
  constructor(
    private readonly allowLocal: boolean,
    private readonly timeoutMs = DELIVERY_TIMEOUT_MS,
  ) {}

  async post(request: DeliveryRequest): Promise<DeliveryOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: string, status: number | null = null, headers: Record<string, string> = {}, body = ''): DeliveryOutcome => ({
      ok: false,
      status,
      headers,
      body,
      durationMs: elapsed(),
      error,
    });
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return failed('URL is invalid');
    }
    const literal = addressLiteral(url.hostname);
    if (literal !== null && !this.allowLocal && isLocalAddress(literal)) return failed(LOCAL_NETWORK_REFUSED);
    const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
    if (!transport) return failed('Only allowed schemes are http, https');
    const body = Buffer.from(request.body, 'utf8');
    return new Promise<DeliveryOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: DeliveryOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const req = transport.request(
        url,
        {
          method: 'POST',
          headers: { ...request.headers, 'Content-Length': String(body.length) },
          lookup: guardedLookup(this.allowLocal),
          // A fresh connection each time: a kept-alive socket would skip the address check.
          agent: false,
          ...(url.protocol === 'https:' ? { rejectUnauthorized: request.verifyTls } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          const done = () => {
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            const headers = headerRecord(res.headers);
            if (status >= 200 && status < 300) finish({ ok: true, status, headers, body: text, durationMs: elapsed() });
            else finish(failed(`HTTP ${status}`, status, headers, text));
            req.destroy();
          };
          res.on('data', (chunk: Buffer) => {
            if (kept < RESPONSE_BODY_LIMIT) {
              const slice = chunk.subarray(0, RESPONSE_BODY_LIMIT - kept);
              chunks.push(slice);
              kept += slice.length;
            }
            // Enough is read: the rest of a large answer is not waited for.
            if (kept >= RESPONSE_BODY_LIMIT) done();
          });
          res.on('end', done);
          res.on('error', done);
        },
      );
      const timer = setTimeout(() => {
        finish(failed(`Timed out after ${Math.round(this.timeoutMs / 1000)} s`));
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (error) => finish(failed(error instanceof RefusedTarget ? error.message : `${error.message}`)));
      req.end(body);
    });
  }
}
