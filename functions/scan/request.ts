import { asyncHandler } from '../../lib/lambda/async-handler';
import { isNatsEvent } from '../../lib/nats/event';
import { GatewayDeps, handleRequest, RequestOutcome } from '../../lib/scan/gateway';
import { log, scanDeps } from './deps';

/** NATS trigger on the request subject (queue group scan-gateway). */
const MAX_REQUEST_BYTES = 64 * 1024;

/** Never throws: one request, however hostile, must not take the function (or serverless offline) down. */
export async function requestCore(deps: () => GatewayDeps, event: unknown): Promise<RequestOutcome> {
  if (!isNatsEvent(event)) {
    log.warn('scan_request_not_a_nats_event');
    return 'dropped';
  }
  if (Buffer.byteLength(event.data, 'utf8') > MAX_REQUEST_BYTES) {
    log.warn('scan_request_too_large', { bytes: Buffer.byteLength(event.data, 'utf8') });
    return 'dropped';
  }
  try {
    return await handleRequest(deps(), event.data);
  } catch (err) {
    log.error('scan_request_failed', { err });
    return 'failed';
  }
}

export const handler = asyncHandler(log, (event: unknown) => requestCore(scanDeps, event));
