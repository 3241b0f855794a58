'use strict';
/**
 * serverless-offline plugin: the DynamoDB Streams event source of `stream`
 * functions (type dynamodb) on DynamoDB Local, in the style of our NATS
 * plugin. The npm plugin serverless-offline-dynamodb-streams was not taken
 * (docs/decisions-pending/bot.md). The logic is in bridge.ts (loaded through tsx).
 */
const { require: tsRequire } = require('tsx/cjs/api');

class ServerlessOfflineDynamoDbStreamsBridge {
  constructor(serverless, _options, utils) {
    this.serverless = serverless;
    this.log = utils && utils.log;
    this.hooks = {
      'offline:start:init': () => this.start(),
      'offline:start:end': () => this.stop(),
    };
  }

  async start() {
    const { streamRoutes, startStreamBridge } = tsRequire('./bridge.ts', __filename);
    const { createLogger } = tsRequire('../../lib/log/index.ts', __filename);
    const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');
    const { DynamoDBStreamsClient } = require('@aws-sdk/client-dynamodb-streams');
    const { LambdaClient } = require('@aws-sdk/client-lambda');

    const service = this.serverless.service;
    const functions = Object.fromEntries(service.getAllFunctions().map((key) => [key, service.getFunction(key)]));
    const resources = (service.resources && service.resources.Resources) || {};
    const routes = streamRoutes(functions, resources);
    if (routes.length === 0) return;
    const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
    // Only against a local endpoint: without one this would read the real account's streams.
    if (!endpoint) {
      if (this.log)
        this.log.warning(
          'DynamoDB streams: AWS_ENDPOINT_URL_DYNAMODB is not set; stream functions will not be triggered',
        );
      return;
    }
    const offline = (service.custom && service.custom['serverless-offline']) || {};
    const options = this.serverless.processedInput.options || {};
    const host = options.host || offline.host || '127.0.0.1';
    const lambdaPort = options.lambdaPort || offline.lambdaPort || 3002;
    const region = service.provider.region;
    this.clients = [
      new DynamoDBClient({ region, endpoint }),
      new DynamoDBStreamsClient({ region, endpoint }),
      new LambdaClient({
        region,
        endpoint: `http://${host}:${lambdaPort}`,
        credentials: { accessKeyId: 'offline', secretAccessKey: 'offline' },
      }),
    ];
    const [dynamodb, streams, lambda] = this.clients;
    this.bridge = startStreamBridge({
      dynamodb,
      streams,
      lambda,
      routes,
      log: createLogger({ component: 'dynamodb-streams-bridge' }),
    });
    if (this.log)
      this.log.notice(`DynamoDB streams: ${routes.map((r) => `${r.tableName} -> ${r.functionName}`).join(', ')}`);
  }

  async stop() {
    if (this.bridge) await this.bridge.stop();
    for (const client of this.clients || []) client.destroy();
  }
}

module.exports = ServerlessOfflineDynamoDbStreamsBridge;
