import fs from 'node:fs';
import path from 'node:path';
import puppeteer, { Browser, Page } from 'puppeteer-core';
import { ensureSystemDep } from '../../tools/stack/system-deps';
import { httpUrl } from './stack';

/**
 * One real Chromium per test file: Debian's `chromium` (tools/stack/system-deps),
 * driven by puppeteer-core; nothing downloads a browser. Screenshots go to the
 * git-ignored test-output/screenshots.
 */

export const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-output', 'screenshots');

export async function launchBrowser(): Promise<Browser> {
  const executablePath = ensureSystemDep('chromium', (line) => process.stdout.write(`[browser] ${line}\n`));
  return puppeteer.launch({
    executablePath,
    headless: true,
    // As root in a container Chromium needs --no-sandbox; /dev/shm may be tiny.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--lang=en-GB'],
  });
}

/**
 * Signs the page in through the sign-in form with an API token (all scopes unless another is given); the
 * session cookie lands in the page's browser context. Returns the page, on the list it was sent to.
 */
export async function signIn(page: Page, token = process.env.TEST_TOKEN_ALL!): Promise<Page> {
  await page.goto(httpUrl('/signin'), { waitUntil: 'domcontentloaded' });
  await page.type('#token', token);
  await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('form.signin button')]);
  return page;
}

/** axe-core from node_modules, run in the page: the violations that matter (serious, critical). */
export async function seriousViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: string[] }>> {
  const source = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated over the DevTools protocol: the page's CSP (nonce-only scripts) does not apply to it.
  await page.evaluate(source);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

export async function screenshot(page: Page, name: string, width: number, height: number): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.setViewport({ width, height });
  const file = path.join(SCREENSHOTS, `${name}-${width}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
