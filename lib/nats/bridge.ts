import type { NatsConnection, Subscription } from 'nats';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Logger } from '../log';
import { withTimeout } from '../util/timeout';
import { natsEventFromMsg, NatsEvent } from './event';
import type { NatsRoute } from './routes';

/**
 * The NATS trigger (docs/architecture.md): subscribes to each route's subject in its
 * queue group and invokes the function asynchronously with a NatsEvent.
 * Locally it runs inside `serverless offline` (plugins/serverless-offline-nats)
 * against the offline Lambda endpoint; in the cloud the same code runs in the
 * standalone connector (connector/) against Lambda. One bad message never
 * stops the subject: a failed invoke is logged and the pump goes on, an invoke
 * is bounded (a hung Lambda endpoint cannot stall the queue group), a message
 * over the size bound is dropped before any invoke, and at most `maxInFlight`
 * invokes run at once (the rest wait in the subscription's buffer).
 *
 * Delivery is at most once: core NATS keeps nothing, so a message received
 * but not yet invoked when the process dies is lost. The scan contract covers
 * that: the core system re-sends a request it saw no ack for within 30 s.
 */

export type Invoke = (functionName: string, event: NatsEvent, signal?: AbortSignal) => Promise<void>;

export interface BridgeLimits {
  /** Larger payloads are dropped (an async Lambda event is at most 256 KiB; contracts are smaller). */
  maxBytes: number;
  invokeTimeoutMs: number;
  /** Invokes in flight at once, across all routes of the bridge. */
  maxInFlight: number;
}

export const DEFAULT_LIMITS: BridgeLimits = { maxBytes: 128 * 1024, invokeTimeoutMs: 10_000, maxInFlight: 16 };

export interface BridgeStats {
  inFlight: number;
  invoked: number;
  failed: number;
  dropped: number;
}

export interface Bridge {
  routes: NatsRoute[];
  stats(): BridgeStats;
  /**
   * Graceful: drains the subscriptions (messages already delivered to this
   * process are still invoked, no new ones arrive) and waits for every invoke.
   */
  stop(): Promise<void>;
}

export function lambdaInvoker(lambda: LambdaClient): Invoke {
  return async (functionName, event, signal) => {
    const out = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
      { abortSignal: signal },
    );
    if (out.StatusCode !== 202) throw new Error(`invoke ${functionName} answered ${out.StatusCode}`);
  };
}

/** A counting semaphore: acquire() waits while `max` holders are in. */
class Slots {
  private held = 0;
  private waiting: Array<() => void> = [];
  constructor(private readonly max: number) {}
  get inUse(): number {
    return this.held;
  }
  async acquire(): Promise<void> {
    if (this.held < this.max) {
      this.held++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter: `held` stays the same.
    if (next) next();
    else this.held--;
  }
}

export function startBridge(
  nc: NatsConnection,
  routes: NatsRoute[],
  invoke: Invoke,
  log: Logger,
  overrides: Partial<BridgeLimits> = {},
): Bridge {
  const limits = { ...DEFAULT_LIMITS, ...overrides };
  if (!(limits.maxInFlight >= 1)) throw new RangeError('maxInFlight must be at least 1');
  const slots = new Slots(limits.maxInFlight);
  const running = new Set<Promise<void>>();
  const counts = { invoked: 0, failed: 0, dropped: 0 };
  const subscriptions: Subscription[] = [];
  const pumps: Promise<void>[] = [];

  const pump = async (sub: Subscription, route: NatsRoute) => {
    for await (const msg of sub) {
      if (msg.data.length > limits.maxBytes) {
        counts.dropped++;
        log.warn('nats_bridge_message_too_large', {
          subject: msg.subject,
          bytes: msg.data.length,
          limit: limits.maxBytes,
        });
        continue;
      }
      await slots.acquire();
      const event = natsEventFromMsg(msg);
      const job = withTimeout(limits.invokeTimeoutMs, `invoke ${route.functionName}`, (signal) =>
        invoke(route.functionName, event, signal),
      )
        .then(
          () => void counts.invoked++,
          (err) => {
            counts.failed++;
            log.error('nats_bridge_invoke_failed', { subject: msg.subject, function: route.functionName, err });
          },
        )
        .finally(() => {
          slots.release();
          running.delete(job);
        });
      running.add(job);
    }
  };

  for (const route of routes) {
    const sub = nc.subscribe(route.subject, { queue: route.queue });
    subscriptions.push(sub);
    pumps.push(pump(sub, route));
    log.info('nats_bridge_subscribed', { subject: route.subject, queue: route.queue, function: route.functionName });
  }
  return {
    routes,
    stats: () => ({ inFlight: slots.inUse, ...counts }),
    async stop() {
      // drain() fails on a closed connection: then nothing more can arrive anyway.
      await Promise.all(subscriptions.map((sub) => sub.drain().catch(() => sub.unsubscribe())));
      await Promise.all(pumps);
      await Promise.all([...running]);
    },
  };
}
