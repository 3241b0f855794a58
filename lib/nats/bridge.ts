import type { NatsConnection, Subscription } from 'nats';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Logger } from '../log';
import { natsEventFromMsg, NatsEvent } from './event';
import type { NatsRoute } from './routes';

/**
 * The NATS trigger (DESIGN §2): subscribes to each route's subject in its
 * queue group and invokes the function asynchronously with a NatsEvent.
 * Locally it runs inside `serverless offline` (emulator/serverless-offline-nats)
 * against the offline Lambda endpoint; in the cloud the same code runs as a
 * long-lived connector against Lambda. A failed invoke is logged and the
 * subscription goes on: one bad message never stops the subject.
 */

export type Invoke = (functionName: string, event: NatsEvent) => Promise<void>;

export interface Bridge {
  routes: NatsRoute[];
  stop(): Promise<void>;
}

export function lambdaInvoker(lambda: LambdaClient): Invoke {
  return async (functionName, event) => {
    const out = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
    );
    if (out.StatusCode !== 202) throw new Error(`invoke ${functionName} answered ${out.StatusCode}`);
  };
}

export function startBridge(nc: NatsConnection, routes: NatsRoute[], invoke: Invoke, log: Logger): Bridge {
  const subscriptions: Subscription[] = [];
  const pumps: Promise<void>[] = [];
  for (const route of routes) {
    const sub = nc.subscribe(route.subject, { queue: route.queue });
    subscriptions.push(sub);
    pumps.push(pump(sub, route, invoke, log));
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

async function pump(sub: Subscription, route: NatsRoute, invoke: Invoke, log: Logger): Promise<void> {
  for await (const msg of sub) {
    try {
      await invoke(route.functionName, natsEventFromMsg(msg));
    } catch (err) {
      log.error('nats_bridge_invoke_failed', { subject: msg.subject, function: route.functionName, err });
    }
  }
}
