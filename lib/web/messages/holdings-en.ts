import { plural } from '../../i18n';
import { html } from '../html';
import type { HoldingsMessages } from './holdings-types';

export const en: HoldingsMessages = {
  positions: 'Positions',
  positionsIntro: 'Each account as its last successful portfolio sync stored it.',
  noPositions: 'No portfolio has been synced yet.',
  emptyAccount: 'No positions in this account.',
  accountHeading: ({ name, id }) => (name ? html`${name} <span class="muted">(${id})</span>` : html`Account ${id}`),
  syncedAt: ({ at }) => html`Synced ${at}`,
  stale: ({ attempt, at, code }) =>
    html`Not refreshed since: the attempt ${attempt} of ${at} failed to refresh it${code ? html` (<code>${code}</code>)` : ''}. The positions below are the last good ones.`,
  positionsCaption: ({ account }) => `Positions of account ${account}`,
  col: {
    instrument: 'Instrument',
    type: 'Type',
    quantity: 'Quantity',
    average: 'Average price',
    current: 'Current price',
    yield: 'Expected yield',
  },
  instrumentType: { share: 'Share', bond: 'Bond', etf: 'ETF', currency: 'Currency', futures: 'Futures' },
  payments: ({ days }) => `Payments in the next ${days} days`,
  paymentsIntro: ({ from, to }) =>
    `Dividends, coupons and redemptions of the instruments held now, paid ${from} to ${to}. Expected = per unit × quantity held.`,
  noPayments: 'No payments expected in these days.',
  paymentsCaption: 'Expected payments by payment date',
  pcol: {
    date: 'Payment date',
    instrument: 'Instrument',
    account: 'Account',
    kind: 'Payment',
    perUnit: 'Per unit',
    quantity: 'Quantity',
    expected: 'Expected',
    record: 'Record date',
  },
  kind: { dividend: 'Dividend', coupon: 'Coupon', maturity: 'Redemption' },
  notAnnounced: 'not announced',
  chartTitle: ({ currency }) => `Expected per month, ${currency}`,
  chartSummary: ({ currency, total, months }) =>
    `Expected payments in ${currency} per month: ${total} in all over ${plural('en', months, { one: '{n} month', other: '{n} months' })}`,
  month: 'Month',
  expected: 'Expected',
  total: ({ amount }) => `In all: ${amount}`,
};
