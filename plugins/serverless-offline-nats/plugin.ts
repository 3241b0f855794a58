import { loadNatsConfig } from '../../lib/config';
import { createLogger } from '../../lib/log';
import { NatsTrigger, startNatsTrigger } from '../../lib/nats/trigger';
import { OfflinePlugin } from '../offline-plugin';

/**
 * serverless-offline plugin: the `nats` trigger under `serverless offline
 * start`, in the style of serverless-offline-sqs. It subscribes each declared
 * subject (with its queue group) and invokes the function through offline's
 * Lambda endpoint, with the same core (lib/nats/trigger.ts) as the cloud
 * connector, so the two cannot drift. With NATS_TRIGGER=connector it stays
 * idle: the connector process (connector/) bridges instead.
 */

export default class ServerlessOfflineNats extends OfflinePlugin {
  private trigger?: NatsTrigger;

  async start(): Promise<void> {
    const service = this.serverless.service;
    const env = { ...process.env, ...service.provider.environment };
    if (env.NATS_TRIGGER === 'connector') {
      this.utils?.log?.notice('NATS trigger: off here (NATS_TRIGGER=connector, the connector process bridges)');
      return;
    }
    this.trigger = await startNatsTrigger({
      functions: this.functions(),
      // The functions' own NATS settings and credentials; a bad pair stops offline with the variable named.
      nats: loadNatsConfig(env),
      region: service.provider.region,
      name: 'serverless-offline-nats',
      log: createLogger({ component: 'nats-bridge' }),
      lambdaEndpoint: this.lambdaEndpoint(),
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
