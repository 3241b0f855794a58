import { LambdaClient } from '@aws-sdk/client-lambda';
import { connect, Events, NatsConnection } from 'nats';
import type { NatsConfig } from '../config';
import type { Logger } from '../log';
import { Bridge, BridgeLimits, lambdaInvoker, startBridge } from './bridge';
import { natsOptions } from './connection';
import { FunctionDefs, natsRoutes, NatsRoute } from './routes';

/**
 * The one core of both NATS triggers: the serverless-offline plugin
 * (plugins/serverless-offline-nats) and the standalone connector (connector/).
 * Routes come from the functions' `nats` events, invokes go through the AWS
 * SDK's Lambda client: IAM-signed on AWS, offline's Lambda endpoint locally
 * (`lambdaEndpoint`, or AWS_ENDPOINT_URL_LAMBDA read by the SDK itself).
 * Reconnection is nats.js's own (unbounded attempts, natsOptions); every
 * status change is logged.
 */

export interface TriggerOptions {
  functions: FunctionDefs;
  nats: NatsConfig;
  region: string;
  /** Client name shown by the NATS server (`nats server report connections`). */
  name: string;
  log: Logger;
  lambdaEndpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  limits?: Partial<BridgeLimits>;
}

export interface NatsTrigger {
  routes: NatsRoute[];
  bridge: Bridge;
  nc: NatsConnection;
  /** False while the client is between a disconnect and a reconnect, and once closed. */
  connected(): boolean;
  /** Drains the bridge (every invoke already started completes), then the connection. */
  stop(): Promise<void>;
}

export async function startNatsTrigger(opts: TriggerOptions): Promise<NatsTrigger | undefined> {
  const routes = natsRoutes(opts.functions);
  if (routes.length === 0) return undefined;
  const nc = await connect(natsOptions(opts.nats, opts.name));
  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) connected = false;
      if (status.type === Events.Reconnect) connected = true;
      opts.log.info('nats_status', {
        type: status.type,
        data: typeof status.data === 'string' ? status.data : undefined,
      });
    }
  })();
  const lambda = new LambdaClient({
    region: opts.region,
    endpoint: opts.lambdaEndpoint,
    credentials: opts.credentials,
    maxAttempts: 3,
  });
  const bridge = startBridge(nc, routes, lambdaInvoker(lambda), opts.log, opts.limits);
  await nc.flush();
  let stopping: Promise<void> | undefined;
  return {
    routes,
    bridge,
    nc,
    connected: () => connected && !nc.isClosed(),
    stop() {
      stopping ??= (async () => {
        await bridge.stop();
        await nc.drain().catch(() => undefined);
        lambda.destroy();
      })();
      return stopping;
    },
  };
}
