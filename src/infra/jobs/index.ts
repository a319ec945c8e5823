export { JobQueue } from './job-queue.js';
export type { JobHandler, JobContext } from './job-queue.js';
