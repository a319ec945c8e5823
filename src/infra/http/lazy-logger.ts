import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

type LogMethod = 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal' | 'silent';

/**
 * `request.log` that becomes a pino child (bound to the request id) only when something
 * logs through it. Most requests never do (the per-request line is written by
 * infra/http/request-log.ts with the id in it), and a child per request is a measurable
 * share of a cached API read (docs/perf-lab.md).
 */
class LazyChildLogger {
  private real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.real ??= this.parent.child(this.bindings, this.options);
    return this.real;
  }

  get level(): string {
    return this.real?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  /** Forwards one log method to the real child, creating it on first use. */
  private forward(method: LogMethod, args: unknown[]): void {
    const logger = this.logger;
    Reflect.apply(logger[method], logger, args);
  }

  info(...args: unknown[]): void {
    this.forward('info', args);
  }
  error(...args: unknown[]): void {
    this.forward('error', args);
  }
  warn(...args: unknown[]): void {
    this.forward('warn', args);
  }
  debug(...args: unknown[]): void {
    this.forward('debug', args);
  }
  trace(...args: unknown[]): void {
    this.forward('trace', args);
  }
  fatal(...args: unknown[]): void {
    this.forward('fatal', args);
  }
  silent(...args: unknown[]): void {
    this.forward('silent', args);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options);
}
