import { plural } from '../i18n';
import { escapeHtml } from './html';
import { type BotMessages, mib } from './messages';

/** The bot in English (lib/telegram/messages.ts). */
export const EN: BotMessages = {
  help: [
    '<b>Downloads bot</b>',
    '/find &lt;name or hash prefix&gt; — the newest matching downloads',
    '/get &lt;id&gt; — one download, with its buttons',
    '/lang ru|en — the language of this chat',
    '/help — this text',
    'Send a magnet link (several in one message are fine) or a .torrent file to add a download.',
    'Notifications arrive here; their buttons retry, cancel or refresh a download.',
  ].join('\n'),
  findUsage: (max) => `Usage: /find &lt;name or hash prefix&gt; (1–${max} characters)`,
  findNone: (q) => `No download matches <code>${escapeHtml(q)}</code>.`,
  getUsage: 'Usage: /get &lt;id&gt; (a download id, 26 characters)',
  getNone: 'No download with that id.',
  expired: 'Button expired.',
  pending: { retry: 'Retrying…', cancel: 'Cancelling…', open: 'Refreshing…', keep: 'Keeping it…' },
  done: {
    retry: 'Retry started.',
    cancel: 'Cancelled.',
    open: 'Refreshed.',
    keep: 'Kept waiting: the clock starts again.',
  },
  notWarned: 'Nothing to wait for: the warning is gone.',
  busy: 'Could not take this press now; nothing was changed. Try again.',
  alreadyCancelled: 'Already cancelled; nothing was changed.',
  expiredAt: (state) => `Button expired: the download is ${state} now.`,
  activeExists: (owner) => `Refused: download ${owner} is already active for this torrent.`,
  clientRefused: 'The torrent client refused; nothing was changed. Try again later.',
  failedOurs: 'Something went wrong; nothing was changed.',
  refusal: 'Sorry, this bot only serves the chats it was set up for.',
  notAllowed: 'Only the people this bot was set up for can retry or cancel; nothing was changed.',
  add: {
    notAllowed: 'Only the people this bot was set up for can add downloads; nothing was added.',
    added: 'Added.',
    alreadyActive: 'Already being downloaded: this is its card; nothing was added.',
    invalidMagnet: 'Not a magnet link the bot can add; nothing was added.',
    invalidTorrent: 'Not a .torrent file the bot can add; nothing was added.',
    invalidName: 'The torrent’s name cannot be used as a file name; nothing was added.',
    tooBig: (limit) => `The file is larger than ${mib('en', limit)} MiB; nothing was added.`,
    fileUnavailable: 'The file could not be fetched from Telegram; nothing was added. Send it again.',
    failed: 'Could not be added now; nothing was added. Send it again.',
    dropped: (dropped, max) =>
      plural('en', dropped, {
        one: `Only the first ${max} magnets of a message are read: {n} more was not added.`,
        other: `Only the first ${max} magnets of a message are read: {n} more were not added.`,
      }),
  },
  titles: {
    created: 'New download',
    adopted: 'Adopted from the client',
    completed: 'Completed',
    failed: 'Failed',
    stuck: 'Stuck',
    resurrected: 'Active again',
    warned: 'No progress: keep waiting?',
    needs_review: 'Needs review',
    seeding_done: 'Seeding done',
  },
  buttons: { retry: 'Retry', cancel: 'Cancel', open: 'Open', keep: 'Keep waiting' },
  states: {
    queued: 'queued',
    downloading: 'downloading',
    paused: 'paused',
    stuck: 'stuck',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  stateLine: (state) => `state: <b>${EN.states[state]}</b>`,
  hashLine: (hash) => `hash: <code>${escapeHtml(hash)}</code>`,
  reviewLine: (reason) => `review: ${escapeHtml(reason)}`,
  idLine: (id) => `id: <code>${escapeHtml(id)}</code>`,
  changedLine: (when, zone) => `changed: ${escapeHtml(when)} ${escapeHtml(zone)}`,
  sizeLine: ({ percent, downloaded, size }) =>
    [percent, downloaded !== undefined && size !== undefined ? `${downloaded} of ${size}` : size]
      .filter(Boolean)
      .join(' · '),
  speedLine: ({ down, up, eta }) => `↓ ${down} · ↑ ${up}${eta !== undefined ? ` · ${eta} left` : ''}`,
  peersLine: ({ seeds, peers, ratio }) =>
    `seeds ${seeds} · peers ${peers}${ratio !== undefined ? ` · ratio ${ratio}` : ''}`,
  etaUnknown: 'time unknown',
  warningLine: (reason) =>
    reason === 'no_metadata'
      ? '<b>No metadata yet</b>: no peer has sent what is in the torrent. Keep waiting, or it ends as failed.'
      : '<b>No progress</b> for too long. Keep waiting, or it ends as failed.',
  statusTitle: 'Download',
  reviewLink: 'Review',
  openLink: 'Open',
  shortened: (dropped, max) =>
    plural('en', dropped, {
      one: `<i>… shortened: {n} more line not shown (Telegram allows ${max} characters)</i>`,
      other: `<i>… shortened: {n} more lines not shown (Telegram allows ${max} characters)</i>`,
    }),
  langNow: (name, chosen) =>
    chosen
      ? `This chat speaks ${name}. Change it: /lang ru or /lang en.`
      : `This chat speaks ${name} (not chosen yet). Choose: /lang ru or /lang en.`,
  langSet: (name) => `From now on this chat speaks ${name}.`,
  langUsage: 'Usage: /lang ru or /lang en',
  languageNames: { en: 'English', ru: 'Russian' },
};
