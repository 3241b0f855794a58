import { BrokerageClient } from './brokerage';
import { eventKey, instrumentKey, operationKey, positionKey } from './keys';
import type { Section } from './model';
import type { SyncStore } from './store';

/**
 * What each mandatory section fetches and stores. Items are keyed by the
 * brokerage's own ids, so re-running a step overwrites, never duplicates.
 */
export type SectionRunner = (api: BrokerageClient, store: SyncStore, user: string) => Promise<number>;

export const SECTION_RUNNERS: Record<Section, SectionRunner> = {
  portfolio: async (api, store, user) => {
    const items = [];
    for (const account of await api.accounts()) {
      for (const p of (await api.portfolio(account.id)).positions) {
        items.push({ ...positionKey(user, account.id, p.instrument_id), entity: 'position', user_id: user, account_id: account.id, ...p });
      }
    }
    await store.putAll(items);
    return items.length;
  },
  operations: async (api, store, user) => {
    const items = [];
    for (const account of await api.accounts()) {
      for (const op of await api.operations(account.id)) {
        items.push({ ...operationKey(user, op.date, op.id), entity: 'operation', user_id: user, account_id: account.id, ...op });
      }
    }
    await store.putAll(items);
    return items.length;
  },
  'events.refresh': async (api, store, user) => {
    const items = (await api.events()).items.map((e) => ({ ...eventKey(user, e.id), entity: 'event', user_id: user, ...e }));
    await store.putAll(items);
    return items.length;
  },
  'catalog.enrichment': async (api, store) => {
    const items = (await api.instruments([])).items.map((i) => ({ ...instrumentKey(i.id), entity: 'instrument', ...i }));
    await store.putAll(items);
    return items.length;
  },
};
