import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';

/** A raw connection: what the server sent, and when it closed (ms after `open`). */
interface Connection {
  socket: net.Socket;
  received: () => string;
  closed: Promise<number>;
}

function open(port: number): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let data = '';
    const socket = net.connect({ host: '127.0.0.1', port }, () =>
      resolve({ socket, received: () => data, closed: new Promise((done) => socket.once('close', () => done(Date.now() - started))) }),
    );
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

const head = (path: string, headers: Record<string, string>) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nPrivate-Token: ${ROOT_TOKEN}\r\nContent-Type: application/json\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

describe('request body idle timeout (REQUEST_BODY_TIMEOUT_SECONDS=1)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({ manualClock: false, env: { REQUEST_BODY_TIMEOUT_SECONDS: '1' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(() => t.close());

  it('a body that stalls after part of it is cut off with 408 and the connection closed', async () => {
    const c = await open(port);
    c.socket.write(head('/api/v4/projects', { 'Content-Length': '100' }));
    c.socket.write('{"name":');
    const closedAfter = await Promise.race([c.closed, sleep(8000).then(() => -1)]);
    assert.ok(closedAfter > 0, 'the server closed the connection');
    assert.ok(closedAfter >= 900, `cut after ${closedAfter} ms`);
    assert.match(c.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.match(c.received(), /Connection: close/);
    assert.match(c.received(), /\r\n\r\n\{"message":"408 Request Timeout"\}$/);
  });

  it('a chunked body that never comes is cut off with 408 too', async () => {
    const c = await open(port);
    c.socket.write(head('/api/v4/projects', { 'Transfer-Encoding': 'chunked' }));
    const closedAfter = await Promise.race([c.closed, sleep(8000).then(() => -1)]);
    assert.ok(closedAfter > 0, 'the server closed the connection');
    assert.match(c.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it('a body that keeps moving goes on past the timeout, and the kept-alive connection stays usable', async () => {
    const c = await open(port);
    const body = JSON.stringify({ name: 'Trickled', path: 'trickled' });
    c.socket.write(head('/api/v4/projects', { 'Content-Length': String(body.length) }));
    // 2.4 s in all, never more than 400 ms between pieces.
    const pieces = body.match(/.{1,7}/g) ?? [];
    for (const [i, piece] of pieces.entries()) {
      c.socket.write(piece);
      if (i < pieces.length - 1) await sleep(2400 / pieces.length);
    }
    for (let i = 0; i < 100 && !c.received().includes('\r\n\r\n{'); i += 1) await sleep(20);
    assert.match(c.received(), /^HTTP\/1\.1 201 Created\r\n/);
    // Idle on the connection (not in a body) for longer than the body timeout: still open.
    await sleep(1500);
    const before = c.received().length;
    c.socket.write(`GET /api/v4/projects/root%2Ftrickled HTTP/1.1\r\nHost: 127.0.0.1\r\nPrivate-Token: ${ROOT_TOKEN}\r\n\r\n`);
    for (let i = 0; i < 100 && c.received().length === before; i += 1) await sleep(20);
    assert.match(c.received().slice(before), /^HTTP\/1\.1 200 OK\r\n/);
    c.socket.destroy();
  });
});
