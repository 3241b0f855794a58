/**
 * Telegram HTML (parse_mode HTML): every value from outside (names, reasons,
 * queries) goes through escapeHtml; a name like `<b>` must show as text, and
 * an unescaped `<` makes Telegram refuse the whole message (400 can't parse
 * entities).
 */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
