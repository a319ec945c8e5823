import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { simpleParser, type AddressObject } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message as the test SMTP server received and parsed it. */
export interface ReceivedMail {
  messageId: string;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  headers: Map<string, unknown>;
  /** The header lines as sent (mailparser turns some headers into objects). */
  headerLines: Map<string, string>;
  /** Whether the session was TLS (smtps or after STARTTLS) and who authenticated. */
  secure: boolean;
  user: string | null;
}

export interface TestSmtpOptions {
  /** TLS from the first byte (smtps). */
  secure?: boolean;
  /** Offer STARTTLS with a self-signed certificate (ignored when `secure`). */
  starttls?: boolean;
  /** Require AUTH PLAIN/LOGIN with these credentials. */
  auth?: { user: string; pass: string };
  /** Milliseconds to wait before answering each message's DATA (a slow server). */
  delayMs?: number;
  /** Listen on this port (a restarted server keeps its address). */
  port?: number;
}

export interface TestSmtp {
  readonly port: number;
  /** Every message received, duplicates included, in arrival order. */
  readonly received: ReceivedMail[];
  /** One message per Message-ID: what a receiver that recognises retries keeps. */
  readonly mailbox: Map<string, ReceivedMail>;
  /** SMTP_URL for the app (credentials and tls options included). */
  url(options?: { user?: string; pass?: string }): string;
  close(): Promise<void>;
}

let certificate: { key: string; cert: string } | null = null;

/** A self-signed certificate for 127.0.0.1, made once per test process with the openssl CLI. */
export function selfSignedCertificate(): { key: string; cert: string } {
  if (!certificate) {
    const dir = mkdtempSync(path.join(tmpdir(), 'basalt-smtp-cert-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    certificate = { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8') };
  }
  return certificate;
}

const addresses = (value: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(value) ? value : value ? [value] : []).flatMap((a) => a.value.map((v) => v.address ?? ''));

/** A real SMTP server (npm smtp-server) on 127.0.0.1 that parses what it receives (mailparser). */
export async function startTestSmtp(options: TestSmtpOptions = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const mailbox = new Map<string, ReceivedMail>();
  const tls = options.secure || options.starttls ? selfSignedCertificate() : null;
  const server = new SMTPServer({
    secure: options.secure ?? false,
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    disabledCommands: [...(options.auth ? [] : ['AUTH']), ...(tls ? [] : ['STARTTLS'])],
    authOptional: !options.auth,
    allowInsecureAuth: false,
    logger: false,
    size: 10 * 1024 * 1024,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass)
        callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          const finish = () => {
            const headerLines = new Map(
              mail.headerLines.map((h) => [
                h.key,
                h.line
                  .slice(h.line.indexOf(':') + 1)
                  .replace(/\r?\n[ \t]+/g, ' ')
                  .trim(),
              ]),
            );
            const message: ReceivedMail = {
              messageId: mail.messageId ?? '',
              from: addresses(mail.from)[0] ?? '',
              to: addresses(mail.to),
              subject: mail.subject ?? '',
              text: mail.text ?? '',
              html: typeof mail.html === 'string' ? mail.html : '',
              headers: mail.headers,
              headerLines,
              secure: session.secure,
              user: typeof session.user === 'string' ? session.user : null,
            };
            received.push(message);
            if (!mailbox.has(message.messageId)) mailbox.set(message.messageId, message);
            callback();
          };
          if (options.delayMs) setTimeout(finish, options.delayMs);
          else finish();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  server.on('error', () => undefined);
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    mailbox,
    url: (credentials = options.auth) => {
      const userinfo = credentials?.user ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass ?? '')}@` : '';
      // The certificate is self-signed: the client is told to accept it (and still uses TLS).
      const query = tls ? '?tls.rejectUnauthorized=false' : '';
      return `${options.secure ? 'smtps' : 'smtp'}://${userinfo}127.0.0.1:${port}${query}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
