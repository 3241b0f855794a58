import { loadNatsConfig } from '../../lib/config';
import { createLogger } from '../../lib/log';
import { NatsTrigger, startNatsTrigger } from '../../lib/nats/trigger';
import type { FunctionDefs } from '../../lib/nats/routes';

/**
 * serverless-offline plugin: the `nats` trigger under `serverless offline
 * start`, in the style of serverless-offline-sqs. It subscribes each declared
 * subject (with its queue group) and invokes the function through offline's
 * Lambda endpoint, with the same core (lib/nats/trigger.ts) as the cloud
 * connector, so the two cannot drift. With NATS_TRIGGER=connector it stays
 * idle: the connector process (connector/) bridges instead.
 */

interface Serverless {
  service: {
    provider: { region: string; environment?: Record<string, string> };
    custom?: Record<string, unknown>;
    getAllFunctions(): string[];
    getFunction(key: string): FunctionDefs[string];
  };
  processedInput: { options?: Record<string, unknown> };
}

interface PluginUtils {
  log?: { notice(message: string): void };
}

export default class ServerlessOfflineNats {
  readonly hooks: Record<string, () => Promise<void>>;
  private trigger?: NatsTrigger;

  constructor(
    private readonly serverless: Serverless,
    _options: unknown,
    private readonly utils?: PluginUtils,
  ) {
    this.hooks = {
      'offline:start:init': () => this.start(),
      'offline:start:end': () => this.stop(),
    };
  }

  async start(): Promise<void> {
    const service = this.serverless.service;
    const env = { ...process.env, ...service.provider.environment };
    if (env.NATS_TRIGGER === 'connector') {
      this.utils?.log?.notice('NATS trigger: off here (NATS_TRIGGER=connector, the connector process bridges)');
      return;
    }
    const functions: FunctionDefs = Object.fromEntries(
      service.getAllFunctions().map((key) => [key, service.getFunction(key)]),
    );
    const offline = (service.custom?.['serverless-offline'] ?? {}) as { host?: string; lambdaPort?: number };
    const options = this.serverless.processedInput.options ?? {};
    const host = (options.host as string | undefined) ?? offline.host ?? '127.0.0.1';
    const lambdaPort = (options.lambdaPort as number | string | undefined) ?? offline.lambdaPort ?? 3002;
    this.trigger = await startNatsTrigger({
      functions,
      // The functions' own NATS settings and credentials; a bad pair stops offline with the variable named.
      nats: loadNatsConfig(env),
      region: service.provider.region,
      name: 'serverless-offline-nats',
      log: createLogger({ component: 'nats-bridge' }),
      lambdaEndpoint: `http://${host}:${lambdaPort}`,
      credentials: { accessKeyId: 'offline', secretAccessKey: 'offline' },
    });
    if (this.trigger) {
      this.utils?.log?.notice(
        `NATS trigger: ${this.trigger.routes.map((r) => `${r.subject} -> ${r.functionName}`).join(', ')}`,
      );
    }
  }

  async stop(): Promise<void> {
    await this.trigger?.stop();
  }
}
