import { answerBytes, type Cell, type Column, type CsvFormat, csvLine, csvStart, headerLine } from './csv';
import type { AccountHoldings, CalendarEntry, PositionView } from './holdings';
import type { Money } from './money';
import type { Operation } from './tbank/contract';

/**
 * The CSV exports of `GET /sync/{user}/exports/{dataset}`: operations, positions
 * and the payment calendar, each column from a named field. Operations are
 * paged (decision 433): one answer holds at most `pageBytes` of CSV as the
 * Lambda answer weighs it, so years of operations never meet Lambda's 6 MB
 * bound; `next` is where the following page starts.
 */

export const EXPORT_DATASETS = ['operations', 'positions', 'calendar'] as const;
export type ExportDataset = (typeof EXPORT_DATASETS)[number];

/** A page's CSV inside the Lambda answer: 5,000,000 bytes of the 6,291,456 the answer may hold, the rest for headers and the envelope. */
export const EXPORT_PAGE_BYTES = 5_000_000;

const dec = (value: string | undefined | null): Cell => (value ? { decimal: value } : null);
const amount = (m: Money | { currency: string; value: string } | null | undefined): Cell => dec(m?.value);
const currency = (m: { currency: string } | null | undefined): Cell => m?.currency.toUpperCase() ?? null;

export const OPERATION_COLUMNS: readonly Column<Operation>[] = [
  { name: 'date_utc', ru: 'Дата (UTC)', cell: (o) => ({ time: o.date }) },
  { name: 'account_id', ru: 'Счёт', cell: (o) => o.account_id },
  { name: 'type', ru: 'Тип', cell: (o) => o.type },
  { name: 'state', ru: 'Статус', cell: (o) => o.state },
  { name: 'name', ru: 'Инструмент', cell: (o) => o.name },
  { name: 'description', ru: 'Описание', cell: (o) => o.description },
  { name: 'figi', ru: 'FIGI', cell: (o) => o.figi },
  { name: 'instrument_uid', ru: 'UID инструмента', cell: (o) => o.instrument_uid },
  { name: 'instrument_type', ru: 'Вид инструмента', cell: (o) => o.instrument_type },
  { name: 'quantity', ru: 'Количество', cell: (o) => dec(o.quantity) },
  { name: 'price', ru: 'Цена', cell: (o) => amount(o.price) },
  { name: 'price_currency', ru: 'Валюта цены', cell: (o) => currency(o.price) },
  { name: 'payment', ru: 'Сумма', cell: (o) => amount(o.payment) },
  { name: 'payment_currency', ru: 'Валюта суммы', cell: (o) => currency(o.payment) },
  { name: 'commission', ru: 'Комиссия', cell: (o) => amount(o.commission) },
  { name: 'commission_currency', ru: 'Валюта комиссии', cell: (o) => currency(o.commission) },
  { name: 'accrued_interest', ru: 'НКД', cell: (o) => amount(o.accrued_int) },
  { name: 'operation_id', ru: 'Номер операции', cell: (o) => o.id },
  { name: 'parent_operation_id', ru: 'Родительская операция', cell: (o) => o.parent_operation_id },
];

type PositionRow = PositionView & { account: AccountHoldings };
export const POSITION_COLUMNS: readonly Column<PositionRow>[] = [
  { name: 'account_id', ru: 'Счёт', cell: (p) => p.account.account_id },
  { name: 'account_name', ru: 'Название счёта', cell: (p) => p.account.name },
  { name: 'ticker', ru: 'Тикер', cell: (p) => p.ticker },
  { name: 'name', ru: 'Инструмент', cell: (p) => p.name },
  { name: 'instrument_type', ru: 'Вид инструмента', cell: (p) => p.instrument_type },
  { name: 'figi', ru: 'FIGI', cell: (p) => p.figi },
  { name: 'instrument_uid', ru: 'UID инструмента', cell: (p) => p.instrument_uid },
  { name: 'quantity', ru: 'Количество', cell: (p) => dec(p.quantity) },
  { name: 'average_price', ru: 'Средняя цена', cell: (p) => amount(p.average_position_price) },
  { name: 'current_price', ru: 'Текущая цена', cell: (p) => amount(p.current_price) },
  {
    name: 'price_currency',
    ru: 'Валюта цены',
    cell: (p) => currency(p.current_price ?? p.average_position_price),
  },
  { name: 'expected_yield', ru: 'Доходность', cell: (p) => dec(p.expected_yield) },
  { name: 'synced_at_utc', ru: 'Обновлено (UTC)', cell: (p) => ({ time: p.account.synced_at }) },
  { name: 'refresh_failed', ru: 'Не обновилось', cell: (p) => (p.account.refresh_failed ? 'true' : 'false') },
];

export const CALENDAR_COLUMNS: readonly Column<CalendarEntry>[] = [
  { name: 'payment_date', ru: 'Дата выплаты', cell: (e) => e.payment_date },
  { name: 'record_date', ru: 'Дата фиксации реестра', cell: (e) => e.record_date },
  { name: 'kind', ru: 'Выплата', cell: (e) => e.kind },
  { name: 'account_id', ru: 'Счёт', cell: (e) => e.account_id },
  { name: 'ticker', ru: 'Тикер', cell: (e) => e.ticker },
  { name: 'name', ru: 'Инструмент', cell: (e) => e.name },
  { name: 'figi', ru: 'FIGI', cell: (e) => e.figi },
  { name: 'instrument_uid', ru: 'UID инструмента', cell: (e) => e.instrument_uid },
  { name: 'quantity', ru: 'Количество', cell: (e) => dec(e.quantity) },
  { name: 'amount_per_unit', ru: 'На одну бумагу', cell: (e) => amount(e.amount_per_unit) },
  { name: 'expected_amount', ru: 'Ожидается', cell: (e) => amount(e.expected_amount) },
  { name: 'currency', ru: 'Валюта', cell: (e) => currency(e.amount_per_unit) },
];

const table = <T>(format: CsvFormat, columns: readonly Column<T>[], rows: readonly T[]) =>
  csvStart(format) +
  headerLine(format, columns) +
  rows
    .map((r) =>
      csvLine(
        format,
        columns.map((c) => c.cell(r)),
      ),
    )
    .join('');

export const positionsCsv = (format: CsvFormat, accounts: readonly AccountHoldings[]) =>
  table(
    format,
    POSITION_COLUMNS,
    accounts.flatMap((account) => account.positions.map((p) => ({ ...p, account }))),
  );

export const calendarCsv = (format: CsvFormat, entries: readonly CalendarEntry[]) =>
  table(format, CALENDAR_COLUMNS, entries);

/**
 * One page of operations (oldest first, as `operations()` reads them) after the
 * cursor `after` (the date of the last operation of the previous page): rows
 * until the next would pass `pageBytes`, never splitting operations of one
 * instant (the cursor is that instant). `next` is absent on the last page.
 */
export function operationsCsvPage(
  format: CsvFormat,
  operations: readonly Operation[],
  pageBytes: number,
  after?: string,
): { body: string; rows: number; next?: string } {
  const head = csvStart(format) + headerLine(format, OPERATION_COLUMNS);
  let size = answerBytes(head);
  const lines: string[] = [];
  let start = 0;
  if (after) while (start < operations.length && operations[start].date <= after) start++;
  let i = start;
  for (; i < operations.length; i++) {
    const line = csvLine(
      format,
      OPERATION_COLUMNS.map((c) => c.cell(operations[i])),
    );
    const bytes = answerBytes(line);
    // Over the budget: end the page at the last change of instant (one instant's operations never split).
    if (size + bytes > pageBytes && i > start && operations[i].date !== operations[i - 1].date) break;
    if (size + bytes > pageBytes && i > start) {
      let cut = i;
      while (cut > start && operations[cut - 1].date === operations[i].date) cut--;
      if (cut > start) {
        lines.length = cut - start;
        i = cut;
        break;
      }
    }
    lines.push(line);
    size += bytes;
  }
  const next = i < operations.length ? operations[i - 1].date : undefined;
  return { body: head + lines.join(''), rows: lines.length, ...(next ? { next } : {}) };
}
