import middy from '@middy/core';
import { isNatsEvent } from '../../lib/nats/event';
import { handleRequest } from '../../lib/scan/gateway';
import { log, scanDeps } from './deps';

/** NATS trigger on the request subject (queue group scan-gateway). */
const MAX_REQUEST_BYTES = 64 * 1024;

export const handler = middy().handler(async (event: unknown) => {
  if (!isNatsEvent(event)) {
    log.warn('scan_request_not_a_nats_event');
    return 'dropped';
  }
  if (Buffer.byteLength(event.data, 'utf8') > MAX_REQUEST_BYTES) {
    log.warn('scan_request_too_large', { bytes: Buffer.byteLength(event.data, 'utf8') });
    return 'dropped';
  }
  return handleRequest(scanDeps(), event.data);
});
