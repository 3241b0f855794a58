import { headers, NatsConnection } from 'nats';

/**
 * Core NATS publish is fire-and-forget: a flush (PING/PONG) after it proves
 * the server has the message. Up to `retries` more tries after the first.
 */
export async function publishWithRetries(
  nc: NatsConnection,
  subject: string,
  data: string,
  msgId: string,
  retries: number,
): Promise<void> {
  const h = headers();
  h.set('Nats-Msg-Id', msgId);
  let last: unknown;
  for (let attempt = 0; attempt <= retries; attempt++) {
    try {
      nc.publish(subject, data, { headers: h });
      await nc.flush();
      return;
    } catch (err) {
      last = err;
      if (attempt < retries) await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
  throw last;
}
