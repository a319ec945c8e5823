import type { FastifyInstance } from 'fastify';
import type { EmailMessage } from '../../src/infra/mail/index.js';

/** Mail settings that make the app queue mail (to a port nothing listens on, unless a test drains it to a real server). */
export const QUEUE_ONLY_MAIL_ENV = { SMTP_URL: 'smtp://127.0.0.1:9', EMAIL_FROM: 'Basalt <basalt@basalt.test>' };

/** The e-mails in the outbox, oldest first, with their state and Message-ID. */
export async function queuedMails(app: FastifyInstance): Promise<Array<EmailMessage & { messageId: string; state: string }>> {
  const rows = await app.platform.db.selectFrom('outbox').selectAll().where('kind', '=', 'email').orderBy('id').execute();
  return rows.map((row) => ({ ...(JSON.parse(row.payload) as EmailMessage), messageId: row.message_id, state: row.state }));
}
