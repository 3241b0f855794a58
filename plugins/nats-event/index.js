// @ts-check
'use strict';
/**
 * Declares the `nats` function event (docs/architecture.md) in the framework's config
 * schema, and nothing else: it is the only plugin of ours that `serverless
 * package`/`deploy` load, so it needs no dependency (no tsx, no
 * serverless-offline). The runtime of the event is the shared core in
 * lib/nats, run by plugins/serverless-offline-nats locally and by the
 * connector (connector/) in the cloud.
 */

const NATS_EVENT_SCHEMA = {
  type: 'object',
  properties: {
    subject: { type: 'string', minLength: 1 },
    queue: { type: 'string', minLength: 1 },
  },
  required: ['subject'],
  additionalProperties: false,
};

class NatsEvent {
  /** @param {{ configSchemaHandler: { defineFunctionEvent(provider: string, event: string, schema: object): void } }} serverless */
  constructor(serverless) {
    serverless.configSchemaHandler.defineFunctionEvent('aws', 'nats', NATS_EVENT_SCHEMA);
  }
}

module.exports = NatsEvent;
module.exports.NATS_EVENT_SCHEMA = NATS_EVENT_SCHEMA;
