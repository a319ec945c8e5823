// Node's http types through Fastify's names: this file only listens (no outbound request, test/api/security).
import type { FastifyBaseLogger, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';

const BODY = JSON.stringify({ message: '408 Request Timeout' });
const RESPONSE = [
  'HTTP/1.1 408 Request Timeout',
  'Content-Type: application/json',
  `Content-Length: ${Buffer.byteLength(BODY)}`,
  'Connection: close',
  '',
  BODY,
].join('\r\n');

/**
 * A request body that stays silent for `ms` is cut off: 408 when no answer has begun, else
 * the connection is closed. Node's `headersTimeout` bounds only the headers and Fastify's
 * `requestTimeout` is absolute (a long push or clone would hit it), so a client could hold a
 * connection and a handler forever by sending its body one byte a minute, or never. This is an
 * idle timeout on the socket while the body is read: every chunk re-arms it, so a slow but
 * moving upload (a large push) goes on; a pause of ours (the reader applying backpressure) is
 * not the client's and re-arms it too. Installed on the server, so it costs nothing for
 * requests without a body and adds no hook to the request path.
 */
export function installBodyIdleTimeout(server: RawServerDefault, ms: number, log: FastifyBaseLogger): void {
  server.on('request', (request: RawRequestDefaultExpression, response: RawReplyDefaultExpression) => {
    const length = request.headers['content-length'];
    if (request.complete || (request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0'))) return;
    const socket = request.socket;
    socket.setTimeout(ms);
    const onTimeout = () => {
      // Data we have not read yet: the wait is ours, not the client's.
      if (request.readableLength > 0 || request.isPaused()) {
        socket.setTimeout(ms);
        return;
      }
      log.info({ url: request.url, remote_ip: socket.remoteAddress, timeout_ms: ms }, 'request body idle too long: cut off');
      if (!response.headersSent && socket.writable) socket.end(RESPONSE);
      socket.destroySoon();
      setTimeout(() => socket.destroy(), 1000).unref();
    };
    request.on('timeout', onTimeout);
    request.once('end', () => {
      request.off('timeout', onTimeout);
      // Once the answer is out Node keeps the socket for keep-alive with a timer of its own.
      if (!response.writableFinished) socket.setTimeout(0);
    });
  });
}
