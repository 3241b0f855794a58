import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadNatsConfig } from '../lib/config';
import { EnvReader } from '../lib/config/env';
import type { Logger } from '../lib/log';
import type { FunctionDefs } from '../lib/nats/routes';
import { NatsTrigger, startNatsTrigger } from '../lib/nats/trigger';

/**
 * The cloud NATS connector: Lambda has no NATS event source, so this
 * long-running process (an ECS Fargate service on AWS, a child of the stack
 * with NATS_TRIGGER=connector locally) subscribes the `nats` events of the
 * packaged service and invokes the functions through the Lambda API. Same core
 * as the offline plugin (lib/nats/trigger.ts).
 *
 *   SERVICE_DEFINITION      the packaged definition: .serverless/serverless-state.json
 *                           (`serverless package`) or `serverless print --format json`
 *   HEALTH_PORT             GET /health: 200 while subscribed and connected, else 503 (default 8080; 0 = any)
 *   HEALTH_HOST             the address it listens on (default 127.0.0.1: the container's own health check
 *                           calls it from inside; set 0.0.0.0 only for a load balancer's probe)
 *   CONNECTOR_MAX_INFLIGHT  invokes at once (default 16)
 *   CONNECTOR_DRAIN_MS      bound on the graceful drain at SIGTERM (default 20000, under ECS's 30 s stopTimeout)
 *   NATS_URL, NATS_USER/NATS_PASSWORD or NATS_NKEY_SEED (+ NATS_JWT)   as for the functions
 *   AWS_REGION, AWS_ENDPOINT_URL_LAMBDA (local only)                    read by the AWS SDK
 */

export interface ConnectorSettings {
  definitionFile: string;
  healthPort: number;
  healthHost: string;
  maxInFlight: number;
  drainMs: number;
  region: string;
}

export function loadConnectorSettings(env: NodeJS.ProcessEnv): ConnectorSettings {
  const r = new EnvReader(env);
  const settings = {
    definitionFile: r.string('SERVICE_DEFINITION', { default: '.serverless/serverless-state.json' }),
    healthPort: r.int('HEALTH_PORT', { default: 8080, min: 0, max: 65535 }),
    healthHost: r.string('HEALTH_HOST', { default: '127.0.0.1' }),
    maxInFlight: r.int('CONNECTOR_MAX_INFLIGHT', { default: 16, min: 1, max: 1024 }),
    drainMs: r.int('CONNECTOR_DRAIN_MS', { default: 20_000, min: 0, max: 120_000 }),
    region: r.string('AWS_REGION', { default: 'us-east-1' }),
  };
  r.done();
  return settings;
}

export class DefinitionError extends Error {
  readonly code = 'DEFINITION_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'DefinitionError';
  }
}

/** The functions of a packaged service: serverless-state.json keeps them under `service`, `serverless print` at the top. */
export function readFunctions(file: string): FunctionDefs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new DefinitionError(`SERVICE_DEFINITION ${file}: ${(err as Error).message}`);
  }
  const doc = parsed as { service?: { functions?: unknown }; functions?: unknown };
  const functions = typeof doc.service === 'object' && doc.service?.functions ? doc.service.functions : doc.functions;
  if (!functions || typeof functions !== 'object')
    throw new DefinitionError(`SERVICE_DEFINITION ${file}: no functions`);
  return functions as FunctionDefs;
}

export interface Connector {
  trigger: NatsTrigger;
  healthUrl: string;
  /** Graceful drain, bounded by drainMs: true if every in-flight invoke finished in time. */
  stop(): Promise<boolean>;
}

export async function startConnector(
  settings: ConnectorSettings,
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<Connector> {
  const trigger = await startNatsTrigger({
    functions: readFunctions(settings.definitionFile),
    nats: loadNatsConfig(env),
    region: settings.region,
    name: 'nats-connector',
    log,
    limits: { maxInFlight: settings.maxInFlight },
  });
  if (!trigger)
    throw new DefinitionError(`SERVICE_DEFINITION ${settings.definitionFile}: no function has a nats event`);

  let draining = false;
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/health') {
      res.writeHead(404).end();
      return;
    }
    const ok = !draining && trigger.connected();
    const body = {
      status: draining ? 'draining' : ok ? 'ok' : 'disconnected',
      routes: trigger.routes.map((r) => ({ subject: r.subject, queue: r.queue, function: r.functionName })),
      ...trigger.bridge.stats(),
    };
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(settings.healthPort, settings.healthHost, resolve));
  const port = (server.address() as AddressInfo).port;
  log.info('connector_ready', { health_port: port, routes: trigger.routes.length, max_inflight: settings.maxInFlight });

  return {
    trigger,
    healthUrl: `http://127.0.0.1:${port}/health`,
    async stop() {
      draining = true;
      const began = Date.now();
      log.info('connector_draining', { ...trigger.bridge.stats() });
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        trigger.stop().then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), settings.drainMs))),
      ]);
      clearTimeout(timer);
      server.close();
      log.info('connector_stopped', { drained, ms: Date.now() - began, ...trigger.bridge.stats() });
      return drained;
    },
  };
}
