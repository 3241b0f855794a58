import { httpHandler } from '../../lib/http/handler';
import { json } from '../../lib/http/response';
import { deliveryStore, telegramLog as log } from '../../lib/telegram/wiring';

/** GET /telegram/failures: the failure store, newest first (notifications given up on, unreadable records). */
export const handler = httpHandler(log, async (event) => {
  const raw = Number(event.queryStringParameters?.limit ?? 50);
  const limit = Number.isInteger(raw) && raw >= 1 && raw <= 100 ? raw : 50;
  return json(200, { items: await deliveryStore().listFailures(limit) });
});
