export { Mailer, EMAIL_KIND, type EmailMessage } from './mailer.js';
