import { connect, NatsConnection } from 'nats';

/**
 * One NATS connection per process, opened on first use and reused by every
 * later invocation of a warm Lambda container. A closed connection (server
 * gone for longer than the reconnect window) is replaced on the next call.
 */

let current: Promise<NatsConnection> | undefined;

export function natsConnection(servers: string[], name = 'torrent-scan-sync'): Promise<NatsConnection> {
  if (current) {
    const pending = current;
    return pending.then((nc) => (nc.isClosed() ? reopen(servers, name) : nc));
  }
  return reopen(servers, name);
}

function reopen(servers: string[], name: string): Promise<NatsConnection> {
  current = connect({ servers, name, timeout: 2000, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  // A failed connect must not poison the cache for the next invocation.
  current.catch(() => (current = undefined));
  return current;
}

export async function closeNatsConnection(): Promise<void> {
  const pending = current;
  current = undefined;
  if (pending) await (await pending.catch(() => undefined))?.close();
}
