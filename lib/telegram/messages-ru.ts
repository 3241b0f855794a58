import { plural } from '../i18n';
import { escapeHtml } from './html';
import { type BotMessages, mib } from './messages';

/** The bot in Russian (lib/telegram/messages.ts). */
export const RU: BotMessages = {
  help: [
    '<b>Бот загрузок</b>',
    '/find &lt;имя или начало хеша&gt; — самые новые подходящие загрузки',
    '/get &lt;id&gt; — одна загрузка с кнопками',
    '/lang ru|en — язык этого чата',
    '/help — эта справка',
    'Чтобы добавить загрузку, пришлите magnet-ссылку (можно несколько в одном сообщении) или файл .torrent.',
    'Сюда приходят уведомления; их кнопки повторяют, отменяют или обновляют загрузку.',
  ].join('\n'),
  findUsage: (max) => `Как искать: /find &lt;имя или начало хеша&gt; (от 1 до ${max} символов)`,
  findNone: (q) => `Ни одна загрузка не подходит под <code>${escapeHtml(q)}</code>.`,
  getUsage: 'Как открыть: /get &lt;id&gt; (id загрузки, 26 символов)',
  getNone: 'Загрузки с таким id нет.',
  expired: 'Кнопка устарела.',
  pending: { retry: 'Повторяю…', cancel: 'Отменяю…', open: 'Обновляю…', keep: 'Ждём ещё…' },
  done: { retry: 'Повтор запущен.', cancel: 'Отменено.', open: 'Обновлено.', keep: 'Ждём ещё: отсчёт начат заново.' },
  notWarned: 'Ждать нечего: предупреждения уже нет.',
  busy: 'Не удалось принять нажатие; ничего не изменено. Попробуйте ещё раз.',
  alreadyCancelled: 'Уже отменено; ничего не изменено.',
  expiredAt: (state) => `Кнопка устарела: загрузка сейчас в состоянии «${RU.states[state]}».`,
  activeExists: (owner) => `Отказано: для этого торрента уже активна загрузка ${owner}.`,
  clientRefused: 'Торрент-клиент отказал; ничего не изменено. Попробуйте позже.',
  failedOurs: 'Что-то пошло не так; ничего не изменено.',
  refusal: 'Извините, этот бот обслуживает только чаты, для которых он настроен.',
  notAllowed: 'Повторять и отменять могут только те, для кого настроен этот бот; ничего не изменено.',
  add: {
    notAllowed: 'Добавлять загрузки могут только те, для кого настроен этот бот; ничего не добавлено.',
    added: 'Добавлено.',
    alreadyActive: 'Уже загружается: вот её карточка; ничего не добавлено.',
    invalidMagnet: 'Эту magnet-ссылку бот добавить не может; ничего не добавлено.',
    invalidTorrent: 'Этот файл не .torrent, который бот может добавить; ничего не добавлено.',
    invalidName: 'Имя торрента нельзя использовать как имя файла; ничего не добавлено.',
    tooBig: (limit) => `Файл больше ${mib('ru', limit)} МиБ; ничего не добавлено.`,
    fileUnavailable: 'Не удалось получить файл из Telegram; ничего не добавлено. Отправьте его ещё раз.',
    failed: 'Сейчас добавить не удалось; ничего не добавлено. Отправьте ещё раз.',
    dropped: (dropped, max) =>
      plural('ru', dropped, {
        one: `Из одного сообщения читаются только первые ${max} magnet-ссылок: ещё {n} не добавлена.`,
        few: `Из одного сообщения читаются только первые ${max} magnet-ссылок: ещё {n} не добавлены.`,
        many: `Из одного сообщения читаются только первые ${max} magnet-ссылок: ещё {n} не добавлено.`,
        other: `Из одного сообщения читаются только первые ${max} magnet-ссылок: ещё {n} не добавлено.`,
      }),
  },
  titles: {
    created: 'Новая загрузка',
    adopted: 'Взята из клиента',
    completed: 'Завершена',
    failed: 'Ошибка',
    stuck: 'Зависла',
    resurrected: 'Снова активна',
    warned: 'Нет продвижения: подождать ещё?',
    needs_review: 'Нужна проверка',
    seeding_done: 'Раздача завершена',
  },
  buttons: { retry: 'Повторить', cancel: 'Отменить', open: 'Открыть', keep: 'Подождать ещё' },
  states: {
    queued: 'в очереди',
    downloading: 'скачивается',
    paused: 'на паузе',
    stuck: 'зависла',
    completed: 'завершена',
    failed: 'ошибка',
    cancelled: 'отменена',
  },
  stateLine: (state) => `состояние: <b>${RU.states[state]}</b>`,
  hashLine: (hash) => `хеш: <code>${escapeHtml(hash)}</code>`,
  reviewLine: (reason) => `проверка: ${escapeHtml(reason)}`,
  idLine: (id) => `id: <code>${escapeHtml(id)}</code>`,
  changedLine: (when, zone) => `изменено: ${escapeHtml(when)} ${escapeHtml(zone)}`,
  sizeLine: ({ percent, downloaded, size }) =>
    [percent, downloaded !== undefined && size !== undefined ? `${downloaded} из ${size}` : size]
      .filter(Boolean)
      .join(' · '),
  speedLine: ({ down, up, eta }) => `↓ ${down} · ↑ ${up}${eta !== undefined ? ` · осталось ${eta}` : ''}`,
  peersLine: ({ seeds, peers, ratio }) =>
    `сиды ${seeds} · пиры ${peers}${ratio !== undefined ? ` · рейтинг ${ratio}` : ''}`,
  etaUnknown: 'время неизвестно',
  warningLine: (reason) =>
    reason === 'no_metadata'
      ? '<b>Метаданных всё нет</b>: ни один пир не прислал, что в торренте. Подождите ещё, иначе загрузка завершится ошибкой.'
      : '<b>Нет продвижения</b> слишком долго. Подождите ещё, иначе загрузка завершится ошибкой.',
  statusTitle: 'Загрузка',
  reviewLink: 'Проверить',
  openLink: 'Открыть',
  shortened: (dropped, max) =>
    plural('ru', dropped, {
      one: `<i>… сокращено: не показана ещё {n} строка (Telegram разрешает ${max} символов)</i>`,
      few: `<i>… сокращено: не показаны ещё {n} строки (Telegram разрешает ${max} символов)</i>`,
      many: `<i>… сокращено: не показаны ещё {n} строк (Telegram разрешает ${max} символов)</i>`,
      other: `<i>… сокращено: не показаны ещё {n} строки (Telegram разрешает ${max} символов)</i>`,
    }),
  langNow: (name, chosen) =>
    chosen
      ? `Язык этого чата: ${name}. Сменить: /lang ru или /lang en.`
      : `Язык этого чата: ${name} (не выбран). Выбрать: /lang ru или /lang en.`,
  langSet: (name) => `Теперь язык этого чата: ${name}.`,
  langUsage: 'Как выбрать: /lang ru или /lang en',
  languageNames: { en: 'английский', ru: 'русский' },
};
