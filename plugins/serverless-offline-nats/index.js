'use strict';
/**
 * serverless-offline plugin: the NATS trigger of DESIGN §2, in the style of
 * serverless-offline-sqs. It declares the `nats` function event for the
 * config schema and, under `serverless offline start`, subscribes each
 * declared subject (with its queue group) and invokes the function through
 * offline's Lambda endpoint. The logic lives in lib/nats (TypeScript, loaded
 * through tsx) so the cloud connector runs the same code.
 */
const { require: tsRequire } = require('tsx/cjs/api');

const NATS_EVENT_SCHEMA = {
  type: 'object',
  properties: {
    subject: { type: 'string', minLength: 1 },
    queue: { type: 'string', minLength: 1 },
  },
  required: ['subject'],
  additionalProperties: false,
};

class ServerlessOfflineNats {
  constructor(serverless, _options, utils) {
    this.serverless = serverless;
    this.log = utils && utils.log;
    serverless.configSchemaHandler.defineFunctionEvent('aws', 'nats', NATS_EVENT_SCHEMA);
    this.hooks = {
      'offline:start:init': () => this.start(),
      'offline:start:end': () => this.stop(),
    };
  }

  async start() {
    const { natsRoutes } = tsRequire('../../lib/nats/routes.ts', __filename);
    const { startBridge, lambdaInvoker } = tsRequire('../../lib/nats/bridge.ts', __filename);
    const { createLogger } = tsRequire('../../lib/log/index.ts', __filename);
    const { loadNatsConfig } = tsRequire('../../lib/config/index.ts', __filename);
    const { natsOptions } = tsRequire('../../lib/nats/connection.ts', __filename);
    const { connect } = require('nats');
    const { LambdaClient } = require('@aws-sdk/client-lambda');

    const service = this.serverless.service;
    const functions = Object.fromEntries(service.getAllFunctions().map((key) => [key, service.getFunction(key)]));
    const routes = natsRoutes(functions);
    if (routes.length === 0) return;

    const offline = (service.custom && service.custom['serverless-offline']) || {};
    const options = this.serverless.processedInput.options || {};
    const host = options.host || offline.host || '127.0.0.1';
    const lambdaPort = options.lambdaPort || offline.lambdaPort || 3002;
    // The functions' own NATS settings and credentials; a bad pair stops offline with the variable named.
    const nats = loadNatsConfig({ ...process.env, ...service.provider.environment });

    this.nc = await connect(natsOptions(nats, 'serverless-offline-nats'));
    const lambda = new LambdaClient({
      endpoint: `http://${host}:${lambdaPort}`,
      region: service.provider.region,
      credentials: { accessKeyId: 'offline', secretAccessKey: 'offline' },
    });
    this.bridge = startBridge(this.nc, routes, lambdaInvoker(lambda), createLogger({ component: 'nats-bridge' }));
    await this.nc.flush();
    if (this.log) this.log.notice(`NATS trigger: ${routes.map((r) => `${r.subject} -> ${r.functionName}`).join(', ')}`);
  }

  async stop() {
    if (this.bridge) await this.bridge.stop();
    if (this.nc) await this.nc.drain().catch(() => undefined);
  }
}

module.exports = ServerlessOfflineNats;
