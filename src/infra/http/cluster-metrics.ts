import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { ServiceUnavailableError } from '../errors/index.js';

/**
 * `/-/metrics` under `WORKERS=N`. Each worker has its own counters, and the primary hands each
 * connection to the next worker, so a scrape answered from one worker's registry alone would
 * jump between workers' values (and Prometheus would read every jump down as a counter reset).
 * A worker asks the primary instead; the primary collects every worker's registry with
 * prom-client's AggregatorRegistry (counters and histograms summed) and sends the text back.
 * Outside a cluster the registry answers directly.
 */
const REQUEST = 'basalt:metrics-request';
const REPLY = 'basalt:metrics-reply';
// prom-client gives up on silent workers after 5 s; a little longer here so its error arrives.
const TIMEOUT_MS = 6_000;

interface Message {
  type: string;
  id: number;
  text?: string;
  error?: string;
}

const isMessage = (value: unknown, type: string): value is Message =>
  typeof value === 'object' && value !== null && (value as Message).type === type && typeof (value as Message).id === 'number';

const readers = new WeakMap<Registry, () => Promise<string>>();

/**
 * Reads the metrics text of the whole server: this registry, or every worker's summed in a
 * cluster. Call it when the app is built: from then on the worker answers the primary's
 * collection requests, whether or not it is ever scraped itself.
 */
export function serverMetricsReader(registry: Registry): () => Promise<string> {
  let reader = readers.get(registry);
  if (!reader) {
    reader = cluster.isWorker ? workerReader(registry) : () => registry.metrics();
    readers.set(registry, reader);
  }
  return reader;
}

function workerReader(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener that answers the primary's collection.
  new AggregatorRegistry();
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let sequence = 0;
  process.on('message', (message: unknown) => {
    if (!isMessage(message, REPLY)) return;
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (typeof message.text === 'string') waiting.resolve(message.text);
    else waiting.reject(new Error(message.error ?? 'no metrics'));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = (sequence += 1);
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new ServiceUnavailableError(5, '503 Service Unavailable - metrics of the other workers did not arrive'));
      }, TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      process.send?.({ type: REQUEST, id });
    }).catch((error: unknown) => {
      if (error instanceof ServiceUnavailableError) throw error;
      throw new ServiceUnavailableError(5, `503 Service Unavailable - ${(error as Error).message}`);
    });
}

/** In the primary: answers workers' requests with every worker's metrics summed. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage(message, REQUEST)) return;
    const reply = (answer: Omit<Message, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: REPLY, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: (error as Error).message }),
    );
  });
}
