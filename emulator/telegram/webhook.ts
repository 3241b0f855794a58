import { ApiError } from './objects';

/**
 * Telegram's side of a webhook: setWebhook / deleteWebhook (methods.d.ts),
 * and the delivery of an Update (update.d.ts `Update`) as a POST with the
 * `X-Telegram-Bot-Api-Secret-Token` header. A webhook that does not answer
 * 2xx within the timeout gets the same Update again (same update_id), up to
 * `maxDeliveries` times.
 */

const SECRET = /^[A-Za-z0-9_-]{1,256}$/;

export interface DeliverySettings {
  timeoutMs: number;
  redeliverAfterMs: number;
  maxDeliveries: number;
}

export class Webhook {
  registered?: { url: string; secret?: string; allowed_updates?: string[] };

  constructor(
    public settings: DeliverySettings,
    initial?: { url: string; secret: string },
  ) {
    if (initial) this.registered = { url: initial.url, secret: initial.secret };
  }

  /** setWebhook's parameters, refused with Telegram's words; an empty url removes the webhook. */
  set(params: Record<string, unknown>): void {
    if (typeof params.url !== 'string' || params.url === '') {
      this.registered = undefined;
      return;
    }
    if (!/^https?:\/\//.test(params.url))
      throw new ApiError(400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook');
    if (
      params.secret_token !== undefined &&
      (typeof params.secret_token !== 'string' || !SECRET.test(params.secret_token))
    )
      throw new ApiError(400, 'Bad Request: bad webhook: secret token contains unallowed characters');
    this.registered = {
      url: params.url,
      secret: params.secret_token as string | undefined,
      allowed_updates: params.allowed_updates as string[] | undefined,
    };
  }

  /** POSTs the Update; no 2xx in time (or an error) and the same Update goes again. */
  async deliver(update: { update_id: number }): Promise<{ status: number; deliveries: number }> {
    const hook = this.registered;
    if (!hook) throw new ApiError(409, 'Conflict: no webhook is set (setWebhook first)');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (hook.secret) headers['X-Telegram-Bot-Api-Secret-Token'] = hook.secret;
    const { timeoutMs, redeliverAfterMs, maxDeliveries } = this.settings;
    for (let n = 1; ; n += 1) {
      let status: number;
      try {
        const answer = await fetch(hook.url, {
          method: 'POST',
          headers,
          body: JSON.stringify(update),
          signal: AbortSignal.timeout(timeoutMs),
        });
        await answer.arrayBuffer();
        status = answer.status;
      } catch {
        status = 0; // no answer in time: the bot may still be working on it
      }
      if ((status >= 200 && status < 300) || n >= maxDeliveries) return { status, deliveries: n };
      await new Promise((r) => setTimeout(r, redeliverAfterMs));
    }
  }
}
