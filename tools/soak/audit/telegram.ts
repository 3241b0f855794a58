import { classify, StreamRecord } from '../../../lib/telegram/model';
import type { Press } from '../load/bot';
import { FaultWindow, insideFault } from '../metrics';
import { violation, Violation } from './violations';

/**
 * The bot's audit, from the downloads table's stream (what should have been
 * said), the telegram table (what the notifier recorded) and the Telegram
 * emulator (what the chats received): every event a person cares about
 * reached every chat exactly once, no message in a chat that no delivery
 * accounts for, and every button press handled to the end in the bot's
 * update ledger.
 */

export interface SentMessage {
  chat_id: number;
  message_id: number;
  text: string;
}

export interface TelegramAuditInput {
  records: StreamRecord[];
  chats: number[];
  /** The telegram table's raw items. */
  items: Record<string, unknown>[];
  messages: SentMessage[];
  presses: Press[];
  windows: FaultWindow[];
}

export function auditTelegram(input: TelegramAuditInput): Violation[] {
  const out: Violation[] = [];
  const deliveries = new Map<string, Record<string, unknown>>();
  for (const i of input.items) if (i.entity === 'delivery') deliveries.set(`${String(i.PK)}|${String(i.SK)}`, i);
  const messageOf = new Map(input.messages.map((m) => [`${m.chat_id}#${m.message_id}`, m]));

  for (const record of input.records) {
    let event;
    try {
      event = classify(record);
    } catch {
      continue; // the notifier refuses it too; not an event
    }
    if (!event) continue;
    for (const chat of input.chats) {
      const d = deliveries.get(`EV#${event.eventId}|CHAT#${chat}`);
      const what = `${event.kind} of ${event.download.id} to chat ${chat}`;
      if (!d || d.status !== 'sent') {
        out.push(
          violation(
            'telegram: every notification delivered once',
            `${what}: ${d ? String(d.status) : 'no delivery record'}`,
          ),
        );
        continue;
      }
      const m = messageOf.get(`${chat}#${String(d.message_id)}`);
      if (!m || !m.text.includes(event.download.id))
        out.push(
          violation(
            'telegram: every notification delivered once',
            `${what}: message ${String(d.message_id)} not in the chat`,
          ),
        );
    }
  }

  // Every message in a chat is a notification here (the soak types no command; presses edit in place).
  const accounted = new Set(
    [...deliveries.values()]
      .filter((d) => d.status === 'sent')
      .map((d) => `${String(d.chat_id)}#${String(d.message_id)}`),
  );
  for (const m of input.messages)
    if (input.chats.includes(m.chat_id) && !accounted.has(`${m.chat_id}#${m.message_id}`))
      out.push(
        violation(
          'telegram: no notification sent twice',
          `chat ${m.chat_id} message ${m.message_id}: no delivery accounts for it`,
        ),
      );

  // A handling still `handling` never finished (decision 356): not acted on, whatever the answer said.
  const ledger = new Set(
    input.items
      .filter((i) => String(i.PK).startsWith('UPD#') && i.status !== 'handling')
      .map((i) => String(i.PK).slice(4)),
  );
  for (const p of input.presses) {
    // The webhook never took it (the service stopped or restarting): Telegram keeps such an update pending and
    // delivers it again later; the emulator gives up after its re-deliveries. Inside a fault, no violation.
    const refused = p.status < 200 || p.status > 299;
    if (refused && insideFault(p.at, input.windows, 35_000)) continue;
    // Handled to the end, its answer refused as too old: Telegram's answer window (seconds) passed while the
    // service was stopped. Acted on once; the outcome reaches the message by its edit (decision 360).
    const acted = ledger.has(String(p.update_id));
    if (acted && !p.answered && insideFault(p.at, input.windows, 35_000)) continue;
    if (!acted || !p.answered)
      out.push(
        violation(
          'telegram: every button press acted on once',
          `update ${p.update_id} (${p.data}) at ${new Date(p.at).toISOString()}, webhook ${p.status}: ${ledger.has(String(p.update_id)) ? 'never answered' : 'not handled to the end in the update ledger'}`,
        ),
      );
  }
  return out;
}
