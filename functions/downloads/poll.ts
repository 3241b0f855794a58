import { asyncHandler } from '../../lib/lambda/async-handler';
import { reconcile } from '../../lib/downloads/reconcile';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { log } from './deps';

/** Schedule (every minute): reconcile our downloads with the torrent client. */
export const handler = asyncHandler(log, async () => reconcile(downloadsDeps()));
