import type { Random } from '../args';
import type { Recorder } from '../metrics';
import { Deadline, every } from './http';

/**
 * Button presses in the Telegram emulator on the notifications the bot sent
 * (open, retry, cancel), by the allowed user; each press's update_id is kept
 * for the audit (the bot's update ledger must hold every one exactly once).
 */

export interface BotLoadDeps {
  telegramUrl: string;
  chats: number[];
  user: number;
  random: Random;
  recorder: Recorder;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

export interface Press {
  update_id: number;
  data: string;
  at: number;
  status: number;
  answered: boolean;
}

interface Message {
  chat_id: number;
  message_id: number;
  reply_markup?: { inline_keyboard: Array<Array<{ callback_data?: string }>> };
}

export async function botLoad(deps: BotLoadDeps, until: Deadline, everyMs = 5000): Promise<Press[]> {
  const presses: Press[] = [];
  await every(everyMs, until, deps.now, deps.sleep, async () => {
    const chat = deps.random.pick(deps.chats);
    const res = await fetch(`${deps.telegramUrl}/emulator/messages?chat_id=${chat}`, {
      signal: AbortSignal.timeout(10_000),
    });
    const { messages } = (await res.json()) as { messages: Message[] };
    const buttons = messages.flatMap((m) =>
      (m.reply_markup?.inline_keyboard ?? [])
        .flat()
        .flatMap((b) => (b.callback_data ? [{ m, data: b.callback_data }] : [])),
    );
    if (!buttons.length) return;
    const { m, data } = deps.random.pick(buttons);
    const at = deps.now();
    deps.recorder.count('button press');
    const pressed = await fetch(`${deps.telegramUrl}/emulator/press`, {
      method: 'POST',
      body: JSON.stringify({ chat_id: chat, user_id: deps.user, data, message_id: m.message_id }),
      signal: AbortSignal.timeout(60_000),
    });
    const answer = (await pressed.json()) as { update_id: number; status: number; answered_after_ms: number | null };
    presses.push({
      update_id: answer.update_id,
      data,
      at,
      status: answer.status,
      answered: answer.answered_after_ms !== null,
    });
    if (answer.answered_after_ms !== null) deps.recorder.sample('button answer', at, answer.answered_after_ms);
    if (answer.status >= 500 || answer.status === 0) deps.recorder.serverError('button press', answer.status, at);
  });
  return presses;
}
