import middy from '@middy/core';
import { reconcile } from '../../lib/downloads/reconcile';
import { downloadsDeps } from './deps';

/** Schedule (every minute): reconcile our downloads with the torrent client. */
export const handler = middy().handler(async () => reconcile(downloadsDeps()));
