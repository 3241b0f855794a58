/** Client of the brokerage API. Every call carries the caller's abort signal: a step's wait is bounded. */

export class BrokerageError extends Error {
  constructor(readonly status: number | undefined, message: string) {
    super(message);
    this.name = 'BrokerageError';
  }
}

export interface Account {
  id: string;
  currency: string;
}
export interface Position {
  instrument_id: string;
  quantity: number;
}
export interface Operation {
  id: string;
  date: string;
  type: string;
  amount: number;
  instrument_id?: string;
  quantity?: number;
}
export interface CorporateEvent {
  id: string;
  instrument_id: string;
  type: string;
  date: string;
}
export interface Instrument {
  id: string;
  name: string;
  currency: string;
}

export class BrokerageClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly signal: AbortSignal,
  ) {}

  accounts = () => this.get<Account[]>('/v1/accounts');
  portfolio = (account: string) => this.get<{ positions: Position[] }>(`/v1/accounts/${encodeURIComponent(account)}/portfolio`);
  events = () => this.get<{ items: CorporateEvent[] }>('/v1/events');
  instruments = (ids: string[]) => this.get<{ items: Instrument[] }>(`/v1/instruments?ids=${ids.map(encodeURIComponent).join(',')}`);

  async operations(account: string): Promise<Operation[]> {
    const all: Operation[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : '';
      const out = await this.get<{ items: Operation[]; next_cursor?: string }>(`/v1/accounts/${encodeURIComponent(account)}/operations${query}`);
      all.push(...out.items);
      if (!out.next_cursor) return all;
      cursor = out.next_cursor;
    }
    throw new BrokerageError(undefined, 'operations: more than 1000 pages');
  }

  private async get<T>(path: string): Promise<T> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), { headers: { authorization: `Bearer ${this.token}` }, signal: this.signal });
    } catch (err) {
      if (this.signal.aborted) throw this.signal.reason;
      throw new BrokerageError(undefined, `GET ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!res.ok) throw new BrokerageError(res.status, `GET ${path} answered ${res.status}`);
    return (await res.json()) as T;
  }
}
