import type { Msg } from 'nats';

/**
 * What a function with a `nats` event receives: Lambda has no NATS event
 * source, so the bridge (lib/nats/bridge) builds this from each message.
 * `data` is the payload as UTF-8 text: every contract on our subjects is JSON.
 */
export interface NatsEvent {
  source: 'nats';
  subject: string;
  /** Subject to answer on, for request/reply. */
  reply?: string;
  headers: Record<string, string[]>;
  data: string;
}

export function natsEventFromMsg(msg: Msg): NatsEvent {
  const headers: Record<string, string[]> = {};
  if (msg.headers) for (const [key, values] of msg.headers) headers[key] = values;
  return {
    source: 'nats',
    subject: msg.subject,
    reply: msg.reply || undefined,
    headers,
    data: new TextDecoder().decode(msg.data),
  };
}

export function isNatsEvent(value: unknown): value is NatsEvent {
  const v = value as Partial<NatsEvent> | null;
  return !!v && v.source === 'nats' && typeof v.subject === 'string' && typeof v.data === 'string';
}
