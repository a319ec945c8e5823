// The SMTP thread of smtp-worker.ts: nodemailer's pooled transport, fed one message at a time.
// Plain CommonJS, so the same file runs from src/ under tsx and from a compiled build
// (scripts/build.mjs copies it into dist/).
'use strict';
const { workerData, parentPort } = require('node:worker_threads');
const nodemailer = require('nodemailer');

// smtp:// upgrades with STARTTLS when the server offers it (nodemailer's default unless ignoreTLS);
// smtps:// is TLS from the first byte. A pool keeps a few connections open so hundreds of mails a
// second do not each pay a handshake.
const transport = nodemailer.createTransport({
  url: workerData.smtpUrl,
  pool: true,
  maxConnections: 10,
  maxMessages: 1000,
  connectionTimeout: 30_000,
  greetingTimeout: 30_000,
  socketTimeout: 120_000,
});

parentPort.on('message', (message) => {
  if (message.type === 'close') {
    transport.close();
    parentPort.close();
    return;
  }
  const { id, mail } = message;
  transport.sendMail({ ...mail, date: new Date(mail.date) }).then(
    () => parentPort.postMessage({ id, ok: true }),
    (error) =>
      parentPort.postMessage({
        id,
        ok: false,
        message: String((error && error.message) || error),
        code: error && typeof error.code === 'string' ? error.code : undefined,
        responseCode: error && typeof error.responseCode === 'number' ? error.responseCode : undefined,
      }),
  );
});
