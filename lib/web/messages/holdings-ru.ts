import { plural } from '../../i18n';
import { html } from '../html';
import type { HoldingsMessages } from './holdings-types';

export const ru: HoldingsMessages = {
  positions: 'Позиции',
  positionsIntro: 'Каждый счёт таким, каким его сохранила последняя успешная синхронизация портфеля.',
  noPositions: 'Портфель ещё не синхронизирован.',
  emptyAccount: 'На этом счёте нет позиций.',
  accountHeading: ({ name, id }) => (name ? html`${name} <span class="muted">(${id})</span>` : html`Счёт ${id}`),
  syncedAt: ({ at }) => html`Синхронизирован ${at}`,
  stale: ({ attempt, at, code }) =>
    html`Не обновлён: попытка ${attempt} от ${at} не смогла его обновить${code ? html` (<code>${code}</code>)` : ''}. Ниже — последние успешно полученные позиции.`,
  positionsCaption: ({ account }) => `Позиции счёта ${account}`,
  col: {
    instrument: 'Инструмент',
    type: 'Вид',
    quantity: 'Количество',
    average: 'Средняя цена',
    current: 'Текущая цена',
    yield: 'Доходность',
  },
  instrumentType: { share: 'Акция', bond: 'Облигация', etf: 'Фонд', currency: 'Валюта', futures: 'Фьючерс' },
  payments: ({ days }) =>
    `Выплаты в ближайшие ${plural('ru', days, { one: '{n} день', few: '{n} дня', many: '{n} дней', other: '{n} дня' })}`,
  paymentsIntro: ({ from, to }) =>
    `Дивиденды, купоны и погашения инструментов, которые в портфеле сейчас, с датой выплаты с ${from} по ${to}; ожидается = на одну бумагу × количество в портфеле.`,
  noPayments: 'В эти дни выплат не ожидается.',
  paymentsCaption: 'Ожидаемые выплаты по дате выплаты',
  pcol: {
    date: 'Дата выплаты',
    instrument: 'Инструмент',
    account: 'Счёт',
    kind: 'Выплата',
    perUnit: 'На одну бумагу',
    quantity: 'Количество',
    expected: 'Ожидается',
    record: 'Дата фиксации реестра',
  },
  kind: { dividend: 'Дивиденд', coupon: 'Купон', maturity: 'Погашение' },
  notAnnounced: 'не объявлено',
  chartTitle: ({ currency }) => `Ожидается по месяцам, ${currency}`,
  chartSummary: ({ currency, total, months }) =>
    `Ожидаемые выплаты в ${currency} по месяцам: всего ${total} за ${plural('ru', months, { one: '{n} месяц', few: '{n} месяца', many: '{n} месяцев', other: '{n} месяца' })}`,
  month: 'Месяц',
  expected: 'Ожидается',
  total: ({ amount }) => `Всего: ${amount}`,
};
