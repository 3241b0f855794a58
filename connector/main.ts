import { createLogger } from '../lib/log';
import { loadConnectorSettings, startConnector } from './connector';

/** Entry point of the NATS connector (connector/connector.ts; Dockerfile beside it). */

const log = createLogger({ component: 'nats-connector' });

async function main() {
  const connector = await startConnector(loadConnectorSettings(process.env), process.env, log);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('connector_signal', { signal });
    void connector.stop().then((drained) => process.exit(drained ? 0 : 1));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  log.error('connector_failed', { err });
  process.exit(1);
});
