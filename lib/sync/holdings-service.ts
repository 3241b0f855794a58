import type { HoldingsStore } from './holdings-store';
import { type CalendarView, calendarView, portfolioView } from './holdings';
import type { HourlyHead } from './model';

/** Attempts read to judge a portfolio's freshness: the newest settled one is among the last few (decision 431). */
const ATTEMPTS_READ = 5;

/** The holdings' reads: the stored items, the catalog's names, and (portfolio) the attempts that came after. */
export class HoldingsService {
  constructor(
    private readonly deps: {
      store: HoldingsStore;
      attempts: (user: string, limit: number) => Promise<HourlyHead[]>;
    },
  ) {}

  async portfolio(user: string) {
    const { store } = this.deps;
    const [portfolios, accounts, attempts] = await Promise.all([
      store.portfolios(user),
      store.accounts(user),
      this.deps.attempts(user, ATTEMPTS_READ),
    ]);
    const instruments = await store.instruments(
      portfolios.flatMap((p) => p.positions.map((pos) => pos.instrument_uid)),
    );
    return portfolioView({ portfolios, accounts, instruments, attempts });
  }

  async calendar(user: string, range: { from?: string; to?: string } = {}): Promise<CalendarView> {
    const { store } = this.deps;
    const [portfolios, events] = await Promise.all([store.portfolios(user), store.events(user)]);
    const instruments = await store.instruments(
      portfolios.flatMap((p) => p.positions.map((pos) => pos.instrument_uid)),
    );
    return calendarView({ portfolios, events, instruments, ...range });
  }
}
