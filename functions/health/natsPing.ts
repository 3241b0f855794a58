import { asyncHandler } from '../../lib/lambda/async-handler';
import { config } from '../../lib/config';
import { natsConnection } from '../../lib/nats/connection';
import { isNatsEvent, NatsEvent } from '../../lib/nats/event';
import { isInboxSubject } from '../../lib/nats/inbox';
import { createLogger } from '../../lib/log';
import { SERVICE_VERSION } from '../../lib/version';

/**
 * `health.ping` over NATS: answers on the reply subject, proving the whole
 * path a NATS-triggered function takes (server → bridge → Lambda → publish).
 * Only an inbox is answered (lib/nats/inbox.ts): the answer echoes the
 * sender's data, and must never land on `scan.results` or another subject
 * of ours because a sender named it as its reply.
 */

const log = createLogger({ function: 'natsPing' });

export interface Pong {
  status: 'ok';
  version: string;
  subject: string;
  echo: string;
  /** The Node.js that runs the functions (`npm start` prints it: locally it must be Lambda's major). */
  node: string;
}

export function pong(event: NatsEvent): Pong {
  return {
    status: 'ok',
    version: SERVICE_VERSION,
    subject: event.subject,
    echo: event.data.slice(0, 1024),
    node: process.version,
  };
}

export const handler = asyncHandler(log, async (event: unknown) => {
  if (!isNatsEvent(event)) {
    log.warn('nats_ping_not_a_nats_event');
    return;
  }
  if (!event.reply) return;
  const nats = config().nats;
  if (!isInboxSubject(event.reply, nats.inboxPrefix)) {
    log.warn('nats_ping_reply_refused', { reply: event.reply.slice(0, 256) });
    return;
  }
  const nc = await natsConnection(nats);
  nc.publish(event.reply, JSON.stringify(pong(event)));
  await nc.flush();
});
