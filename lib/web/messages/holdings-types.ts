import type { Html } from '../html';
import type { PaymentKind } from '../../sync/holdings';

/** The console's holdings sections (lib/web/console-holdings.ts): positions and the next payments, one catalogue per language. */
export interface HoldingsMessages {
  positions: string;
  positionsIntro: string;
  noPositions: string;
  emptyAccount: string;
  accountHeading: (p: { name: string | null; id: Html }) => Html;
  syncedAt: (p: { at: Html }) => Html;
  /** A newer settled attempt did not refresh this account's portfolio. */
  stale: (p: { attempt: Html; at: Html; code: string | null }) => Html;
  positionsCaption: (p: { account: string }) => string;
  col: { instrument: string; type: string; quantity: string; average: string; current: string; yield: string };
  instrumentType: Record<string, string>;
  payments: (p: { days: number }) => string;
  paymentsIntro: (p: { from: string; to: string }) => string;
  noPayments: string;
  paymentsCaption: string;
  pcol: {
    date: string;
    instrument: string;
    kind: string;
    account: string;
    perUnit: string;
    quantity: string;
    expected: string;
    record: string;
  };
  kind: Record<PaymentKind, string>;
  notAnnounced: string;
  chartTitle: (p: { currency: string }) => string;
  chartSummary: (p: { currency: string; total: string; months: number }) => string;
  month: string;
  expected: string;
  total: (p: { amount: string }) => string;
}
