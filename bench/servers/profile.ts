// Steady-state CPU profiles for docs/performance.md: with BENCH_PROFILE=<file>, SIGUSR2
// starts the V8 profiler (after the warm-up load, so start-up and seeding stay out) and
// SIGTERM writes the profile before the server exits. `--cpu-prof` would profile the
// whole process, start-up included.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

export function profileOnSignal(): { stop: () => Promise<void> } {
  const file = process.env.BENCH_PROFILE;
  let session: Session | null = null;
  if (file) {
    process.on('SIGUSR2', () => {
      if (session) return;
      session = new Session();
      session.connect();
      void session
        .post('Profiler.setSamplingInterval', { interval: 250 })
        .then(() => session?.post('Profiler.enable'))
        .then(() => session?.post('Profiler.start'));
    });
  }
  return {
    stop: async () => {
      if (!file || !session) return;
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
