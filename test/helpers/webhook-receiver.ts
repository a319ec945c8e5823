import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A webhook receiver on 127.0.0.1: records every POST and answers `status` (200 unless changed). */
export class WebhookReceiver {
  readonly received: ReceivedHook[] = [];
  status = 200;
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          body = { unparsed: text };
        }
        this.received.push({ path: req.url ?? '/', headers: req.headers, body });
        res.writeHead(this.status, { 'content-type': 'text/plain', 'x-receiver': 'test' });
        res.end(this.status < 300 ? 'ok' : 'receiver failed');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The requests whose X-Gitlab-Event is `event`, and forgets them all. */
  take(event?: string): ReceivedHook[] {
    const picked = event ? this.received.filter((r) => r.headers['x-gitlab-event'] === event) : [...this.received];
    this.received.length = 0;
    return picked;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
