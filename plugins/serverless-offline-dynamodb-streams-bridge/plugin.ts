import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { createLogger } from '../../lib/log';
import { OfflinePlugin } from '../offline-plugin';
import { startStreamBridge, streamRoutes } from './bridge';

/**
 * serverless-offline plugin: the DynamoDB Streams event source of `stream`
 * functions (type dynamodb) on DynamoDB Local, in the style of our NATS
 * plugin. The npm plugin serverless-offline-dynamodb-streams was not taken
 * (docs/decisions.md, 88). The polling itself is in bridge.ts.
 */

export default class ServerlessOfflineDynamoDbStreamsBridge extends OfflinePlugin {
  private bridge?: { stop(): Promise<void> };
  private clients: Array<{ destroy(): void }> = [];

  async start(): Promise<void> {
    const service = this.serverless.service;
    const routes = streamRoutes(this.functions(), service.resources?.Resources ?? {});
    if (routes.length === 0) return;
    const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
    // Only against a local endpoint: without one this would read the real account's streams.
    if (!endpoint) {
      this.utils?.log?.warning(
        'DynamoDB streams: AWS_ENDPOINT_URL_DYNAMODB is not set; stream functions will not be triggered',
      );
      return;
    }
    const region = service.provider.region;
    const dynamodb = new DynamoDBClient({ region, endpoint });
    const streams = new DynamoDBStreamsClient({ region, endpoint });
    const lambda = new LambdaClient({
      region,
      endpoint: this.lambdaEndpoint(),
      credentials: { accessKeyId: 'offline', secretAccessKey: 'offline' },
    });
    this.clients = [dynamodb, streams, lambda];
    this.bridge = startStreamBridge({
      dynamodb,
      streams,
      lambda,
      routes,
      log: createLogger({ component: 'dynamodb-streams-bridge' }),
    });
    this.utils?.log?.notice(`DynamoDB streams: ${routes.map((r) => `${r.tableName} -> ${r.functionName}`).join(', ')}`);
  }

  async stop(): Promise<void> {
    await this.bridge?.stop();
    for (const client of this.clients) client.destroy();
  }
}
