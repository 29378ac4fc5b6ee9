import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartSpecs } from '../../reports/chart-specs.js';
import { renderHtml } from '../../reports/html.js';
import { escapeHtml } from '../../reports/html-table.js';
import { parseResults } from '../../harness/results/read.js';
import { ROOT } from '../cli/helpers.js';
import { cellOf, durability, renameScenario, smallRun } from './fixture.js';

const BASELINE_FILE = path.join(ROOT, 'baselines/offline.json');

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `test/reports/html.test.ts: skipping the browser test: ${CHROMIUM} is missing (apt-get install -y chromium)`,
  );

/**
 * One headless Chromium for the file's browser tests (a launch costs more CPU than a page), with its
 * profile in a temp dir of its own; both removed after the tests.
 */
let browser: Promise<{ context: BrowserContext; profile: string }> | undefined;
function chromiumContext(): Promise<BrowserContext> {
  browser ??= (async () => {
    const profile = await mkdtemp(path.join(os.tmpdir(), 'membench-html-profile-'));
    const { chromium } = await import('playwright-core');
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    return { context, profile };
  })();
  return browser.then(({ context }) => context);
}
afterAll(async () => {
  if (!browser) return;
  const { context, profile } = await browser;
  await context.close();
  await rm(profile, { recursive: true, force: true });
});

/** The DOM shapes the in-page callbacks use (the tsconfig has no DOM lib). */
interface PageCanvas {
  id: string;
  width: number;
  height: number;
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray };
  };
}
interface PageRow {
  cells: ArrayLike<{ getAttribute(name: string): string | null }>;
}

/** The inlined chart data, parsed back as the page would. */
function inlinedSpecs(html: string): unknown {
  const match = /<script type="application\/json" id="membench-charts">([\s\S]*?)<\/script>/u.exec(html);
  if (!match) throw new Error('no inlined chart data');
  return JSON.parse(match[1]!);
}

describe('report.html (rendered)', () => {
  it('is self-contained: scripts and data inline, nothing loaded from elsewhere', () => {
    const html = renderHtml(smallRun());
    expect(html).not.toMatch(/<script[^>]+src=/iu);
    expect(html).not.toMatch(/<link\b/iu);
    expect(html).not.toMatch(/<img\b/iu);
    expect(html).toContain('Chart.js v4');
    expect(inlinedSpecs(html)).toEqual(JSON.parse(JSON.stringify(chartSpecs(smallRun()))));
    for (const spec of chartSpecs(smallRun())) expect(html).toContain(`<canvas id="chart-${spec.id}"`);
  });

  it('shows the run header and every cell, and escapes names that look like markup', () => {
    const hostile = '</script><script>alert("x")</script> & 食谱';
    const html = renderHtml(renameScenario(smallRun(), 'recipes-zh', hostile));
    expect(html).toContain('cl100k_base');
    expect(html).toContain('offline reference model');
    expect(html).toContain(escapeHtml(hostile));
    expect(html).not.toContain('<script>alert(');
    expect(JSON.stringify(inlinedSpecs(html))).toContain('alert(\\"x\\")');
    expect(html.match(/<tr>/gu)!.length).toBeGreaterThan(smallRun().cells.length);
  });
});

describe('report.html in headless Chromium', () => {
  const result = renameScenario(smallRun(), 'recipes-zh', '中文食谱');
  Object.assign(cellOf(result, '中文食谱/window(k=2)'), {
    durabilityOutcome: durability(2, { '1': [3, 1], '2': [3, 0] }),
  });
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-html-'));
    file = path.join(dir, 'report.html');
    await writeFile(file, renderHtml(result));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(!hasChromium)(
    'draws every chart, sorts a table on a header click, fetches nothing and logs no error',
    async () => {
      const page = await (await chromiumContext()).newPage();
      try {
        const problems: string[] = [];
        const requests: string[] = [];
        await page.route('**/*', (route) => {
          const url = route.request().url();
          if (url.startsWith('file:')) return route.continue();
          requests.push(url);
          return route.abort();
        });
        page.on('console', (message) => {
          if (message.type() === 'error' || message.type() === 'warning')
            problems.push(`console ${message.type()}: ${message.text()}`);
        });
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });

        const canvases = await page.evaluate(() => {
          // Runs in the page; the tsconfig has no DOM lib, so the few DOM shapes used are typed here.
          const { document, Chart } = globalThis as unknown as {
            document: { querySelectorAll(selector: string): ArrayLike<PageCanvas> };
            Chart: { getChart(canvas: unknown): unknown };
          };
          return Array.from(document.querySelectorAll('canvas')).map((canvas) => {
            const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
            let ink = 0;
            for (let index = 3; index < data.length; index += 4) if (data[index]! > 0) ink++;
            return {
              id: canvas.id,
              hasChart: Chart.getChart(canvas) !== undefined,
              ink: ink / (canvas.width * canvas.height),
            };
          });
        });
        expect(canvases.map((canvas) => canvas.id)).toEqual(chartSpecs(result).map((spec) => `chart-${spec.id}`));
        for (const canvas of canvases) {
          expect(canvas.hasChart, canvas.id).toBe(true);
          expect(canvas.ink, `${canvas.id} drew`).toBeGreaterThan(0.01);
        }

        const column = async () =>
          page.$$eval('#leaderboard-0 tbody tr', (rows) =>
            rows.map((row) => Number((row as unknown as PageRow).cells[2]!.getAttribute('data-sort'))),
          );
        const before = await column();
        const header = page.locator('#leaderboard-0 th', { hasText: 'ctx/turn' });
        await header.click();
        const ascending = await column();
        expect(ascending).toEqual([...before].sort((a, b) => a - b));
        expect(await header.getAttribute('aria-sort')).toBe('ascending');
        await header.click();
        expect(await column()).toEqual([...before].sort((a, b) => b - a));
        expect(await header.getAttribute('aria-sort')).toBe('descending');

        // The first screen at 1,400 px: the verdict (recall-vs-tokens chart, then the leaderboard), no horizontal scroll.
        await page.setViewportSize({ width: 1400, height: 900 });
        const screen = await page.evaluate(() => {
          const { document } = globalThis as unknown as {
            document: {
              documentElement: { scrollWidth: number; clientWidth: number };
              querySelector(selector: string): { id: string; getBoundingClientRect(): { top: number } } | null;
            };
          };
          return {
            scrollWidth: document.documentElement.scrollWidth,
            clientWidth: document.documentElement.clientWidth,
            firstSection: document.querySelector('main section')?.id,
            firstCanvas: document.querySelector('main canvas')?.id,
            leaderboardTop: document.querySelector('#leaderboard-0')?.getBoundingClientRect().top ?? Infinity,
          };
        });
        expect(screen.scrollWidth).toBeLessThanOrEqual(screen.clientWidth);
        expect(screen).toMatchObject({ firstSection: 'verdict', firstCanvas: 'chart-recall-vs-tokens' });
        expect(screen.leaderboardTop).toBeLessThan(900);
        await page.screenshot({ path: path.join(dir, 'report.png'), fullPage: true });
        expect(requests).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    },
  );
});

describe('report.html of a default-size run in headless Chromium', () => {
  // The committed baseline is a whole default run (every built-in strategy, every chart): rendering
  // it is quick, where running it here would take minutes.
  const result = parseResults(readFileSync(BASELINE_FILE, 'utf8'), BASELINE_FILE);
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-html-full-'));
    file = path.join(dir, 'report.html');
    await writeFile(file, renderHtml(result));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is a default-size run: nine strategies, a hundred cells and more, every chart', () => {
    expect(new Set(result.cells.map((cell) => cell.strategy)).size).toBe(9);
    expect(result.cells.length).toBeGreaterThanOrEqual(100);
    expect(chartSpecs(result).length).toBeGreaterThanOrEqual(14);
  });

  it.skipIf(!hasChromium)(
    'holds the chart, the top of the leaderboard and recommendations of at most three lines in its first 1,400 × 900 screen, with no horizontal scroll',
    { timeout: 120_000 },
    async () => {
      const page = await (await chromiumContext()).newPage();
      try {
        const problems: string[] = [];
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        await page.setViewportSize({ width: 1400, height: 900 });
        await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
        const screen = await page.evaluate(() => {
          interface Box {
            top: number;
            bottom: number;
            height: number;
          }
          interface Element {
            id: string;
            getBoundingClientRect(): Box;
            querySelector(selector: string): Element | null;
            firstChild: unknown;
          }
          const { document, Chart } = globalThis as unknown as {
            document: {
              documentElement: { scrollWidth: number; clientWidth: number };
              querySelector(selector: string): Element | null;
              querySelectorAll(selector: string): ArrayLike<Element>;
              createRange(): { selectNodeContents(node: unknown): void; getClientRects(): ArrayLike<Box> };
            };
            Chart: { getChart(canvas: unknown): unknown };
          };
          const recommendations = Array.from(document.querySelectorAll('.verdict-top .recommendations > li')).map(
            (item) => {
              // The sentence's own lines: the text node before the collapsed details.
              const range = document.createRange();
              range.selectNodeContents(item.firstChild);
              const tops = new Set(Array.from(range.getClientRects()).map((rect) => Math.round(rect.top)));
              return { lines: tops.size, bottom: item.getBoundingClientRect().bottom };
            },
          );
          const canvases = Array.from(document.querySelectorAll('canvas'));
          return {
            scrollWidth: document.documentElement.scrollWidth,
            clientWidth: document.documentElement.clientWidth,
            chartBottom: document.querySelector('#chart-recall-vs-tokens')?.getBoundingClientRect().bottom ?? Infinity,
            leaderboardTop: document.querySelector('#leaderboard-0 tbody tr')?.getBoundingClientRect().top ?? Infinity,
            recommendations,
            charts: canvases.filter((canvas) => Chart.getChart(canvas) !== undefined).length,
            canvases: canvases.length,
          };
        });
        expect(screen.scrollWidth).toBeLessThanOrEqual(screen.clientWidth);
        expect(screen.chartBottom).toBeLessThanOrEqual(900);
        expect(screen.leaderboardTop).toBeLessThan(900);
        expect(screen.recommendations.length).toBeGreaterThanOrEqual(2);
        for (const item of screen.recommendations) {
          expect(item.lines).toBeLessThanOrEqual(3);
          expect(item.bottom).toBeLessThanOrEqual(900);
        }
        expect(screen.charts).toBe(screen.canvases);
        expect(screen.charts).toBe(chartSpecs(result).length);
        await page.screenshot({ path: path.join(dir, 'first-screen.png') });
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    },
  );
});
