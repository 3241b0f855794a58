import type { NatsConnection, Subscription } from 'nats';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Logger } from '../log';
import { withTimeout } from '../util/timeout';
import { natsEventFromMsg, NatsEvent } from './event';
import type { NatsRoute } from './routes';

/**
 * The NATS trigger (DESIGN §2): subscribes to each route's subject in its
 * queue group and invokes the function asynchronously with a NatsEvent.
 * Locally it runs inside `serverless offline` (plugins/serverless-offline-nats)
 * against the offline Lambda endpoint; in the cloud the same code runs as a
 * long-lived connector against Lambda. One bad message never stops the
 * subject: a failed invoke is logged and the pump goes on, an invoke is
 * bounded (a hung Lambda endpoint cannot stall the queue group), and a message
 * over the size bound is dropped before any invoke.
 */

export type Invoke = (functionName: string, event: NatsEvent, signal?: AbortSignal) => Promise<void>;

export interface BridgeLimits {
  /** Larger payloads are dropped (an async Lambda event is at most 256 KiB; contracts are smaller). */
  maxBytes: number;
  invokeTimeoutMs: number;
}

export const DEFAULT_LIMITS: BridgeLimits = { maxBytes: 128 * 1024, invokeTimeoutMs: 10_000 };

export interface Bridge {
  routes: NatsRoute[];
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

export function startBridge(nc: NatsConnection, routes: NatsRoute[], invoke: Invoke, log: Logger, limits: BridgeLimits = DEFAULT_LIMITS): Bridge {
  const subscriptions: Subscription[] = [];
  const pumps: Promise<void>[] = [];
  for (const route of routes) {
    const sub = nc.subscribe(route.subject, { queue: route.queue });
    subscriptions.push(sub);
    pumps.push(pump(sub, route, invoke, log, limits));
    log.info('nats_bridge_subscribed', { subject: route.subject, queue: route.queue, function: route.functionName });
  }
  return {
    routes,
    async stop() {
      for (const sub of subscriptions) sub.unsubscribe();
      await Promise.all(pumps);
    },
  };
}

async function pump(sub: Subscription, route: NatsRoute, invoke: Invoke, log: Logger, limits: BridgeLimits): Promise<void> {
  for await (const msg of sub) {
    if (msg.data.length > limits.maxBytes) {
      log.warn('nats_bridge_message_too_large', { subject: msg.subject, bytes: msg.data.length, limit: limits.maxBytes });
      continue;
    }
    try {
      await withTimeout(limits.invokeTimeoutMs, `invoke ${route.functionName}`, (signal) => invoke(route.functionName, natsEventFromMsg(msg), signal));
    } catch (err) {
      log.error('nats_bridge_invoke_failed', { subject: msg.subject, function: route.functionName, err });
    }
  }
}
