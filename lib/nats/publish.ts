import { Events, headers, NatsConnection } from 'nats';
import { PublishFailedError, PublishRefusedError } from './errors';

export interface PublishOptions {
  /** Longest wait for one try's flush (ms). */
  flushTimeoutMs?: number;
  /** The first pause between tries (ms); it doubles after each. */
  backoffMs?: number;
}

export async function publishWithRetries(
  nc: NatsConnection,
  subject: string,
  data: string,
  msgId: string,
  retries: number,
  options: PublishOptions = {},
): Promise<void> {
  const { flushTimeoutMs = 2000, backoffMs = 100 } = options;
  const refusals = watchRefusals(nc);
  const h = headers();
  h.set('Nats-Msg-Id', msgId);
  let last: unknown;
  for (let attempt = 0; attempt <= retries; attempt++) {
    try {
      const before = refusals.count(subject);
      nc.publish(subject, data, { headers: h });
      await bounded(nc.flush(), flushTimeoutMs);
      // The status listener runs in a microtask after the -ERR is parsed: let it catch up before counting.
      await new Promise((r) => setImmediate(r));
      if (refusals.count(subject) !== before) throw new PublishRefusedError(subject);
      return;
    } catch (err) {
      last = err;
      if (attempt < retries) await new Promise((r) => setTimeout(r, backoffMs * 2 ** attempt));
    }
  }
  // The tries made are in the error, so the caller's log line says how hard it tried (design rule 37).
  throw new PublishFailedError(subject, retries + 1, last);
}

function bounded(flush: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`NATS flush gave no answer within ${ms} ms`)), ms);
  });
  return Promise.race([flush, timeout]).finally(() => clearTimeout(timer));
}

interface Refusals {
  count(subject: string): number;
}

const watchers = new WeakMap<NatsConnection, Refusals>();

/** One status listener per connection, counting the server's publish refusals by subject. */
function watchRefusals(nc: NatsConnection): Refusals {
  let watcher = watchers.get(nc);
  if (watcher) return watcher;
  const counts = new Map<string, number>();
  watcher = { count: (subject) => counts.get(subject) ?? 0 };
  watchers.set(nc, watcher);
  void (async () => {
    for await (const status of nc.status()) {
      const context = (status as { permissionContext?: { operation?: string; subject?: string } }).permissionContext;
      if (status.type === Events.Error && context?.operation === 'publish' && context.subject)
        counts.set(context.subject, (counts.get(context.subject) ?? 0) + 1);
    }
  })().catch(() => undefined);
  return watcher;
}
