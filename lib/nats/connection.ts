import {
  connect,
  ConnectionOptions,
  jwtAuthenticator,
  NatsConnection,
  nkeyAuthenticator,
  usernamePasswordAuthenticator,
} from 'nats';
import type { NatsConfig } from '../config';

/**
 * NATS connections. `natsOptions` is the ONE place credentials become
 * connection options (functions, the offline bridge, the stack's probe, tools
 * and tests all use it). `natsConnection` keeps one connection per process,
 * opened on first use and reused by every later invocation of a warm Lambda
 * container; a closed connection is replaced on the next call.
 */

export function natsOptions(nats: NatsConfig, name = 'torrent-scan-sync'): ConnectionOptions {
  const base: ConnectionOptions = {
    servers: nats.servers,
    name,
    timeout: 2000,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    ...(nats.inboxPrefix ? { inboxPrefix: nats.inboxPrefix } : {}),
  };
  const enc = new TextEncoder();
  switch (nats.auth.kind) {
    case 'none':
      return base;
    case 'user':
      return { ...base, authenticator: usernamePasswordAuthenticator(nats.auth.user, nats.auth.password) };
    case 'nkey':
      return { ...base, authenticator: nkeyAuthenticator(enc.encode(nats.auth.seed)) };
    case 'jwt':
      return { ...base, authenticator: jwtAuthenticator(nats.auth.jwt, enc.encode(nats.auth.seed)) };
  }
}

let current: Promise<NatsConnection> | undefined;

export function natsConnection(nats: NatsConfig): Promise<NatsConnection> {
  if (current) {
    const pending = current;
    return pending.then((nc) => (nc.isClosed() ? reopen(nats) : nc));
  }
  return reopen(nats);
}

function reopen(nats: NatsConfig): Promise<NatsConnection> {
  current = connect(natsOptions(nats));
  // A failed connect must not poison the cache for the next invocation.
  current.catch(() => (current = undefined));
  return current;
}

export async function closeNatsConnection(): Promise<void> {
  const pending = current;
  current = undefined;
  if (pending) await (await pending.catch(() => undefined))?.close();
}
