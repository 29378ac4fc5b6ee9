/**
 * What report.html carries inline so it needs nothing at view time: chart.js, the page's style, and
 * the script that draws the charts from their specs and sorts the tables.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { logTickLabel } from './chart-style.js';
import { drawPointLabels, placePointLabels } from './point-labels.js';

const require = createRequire(import.meta.url);
let chartJsSource: string | undefined;

/** chart.js's UMD build (beside its CommonJS entry: the package exports no subpath), read once; `</script` cannot occur inside an inline script. */
export function chartJs(): string {
  chartJsSource ??= readFileSync(
    path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'),
    'utf8',
  ).replace(/<\/script/giu, '<\\/script');
  return chartJsSource;
}

/** The page's style. */
export const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",sans-serif;margin:1rem auto;max-width:1320px;padding:0 1rem;color:#222}
h1{margin-bottom:.3rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.run-header{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;font-size:.92rem}.run-header dt{font-weight:600;color:#555}.run-header dd{margin:0}
.note{background:#f6f8fa;border-left:4px solid #999;padding:.5rem .8rem;font-size:.92rem}
table{border-collapse:collapse;font-size:.85rem;width:100%}th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
td[data-sort]{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3;cursor:pointer;user-select:none;white-space:nowrap}th::after{content:" ↕";color:#aaa}
th[aria-sort=ascending]::after{content:" ▲";color:#333}th[aria-sort=descending]::after{content:" ▼";color:#333}
tbody tr:nth-child(even){background:#fafafa}.verdict-top{display:flex;gap:1.5rem;align-items:flex-start}.verdict-top .chart{flex:0 0 56%;margin:0}.verdict-top>div{flex:1}.recommendations{font-size:.95rem;padding-left:1.2rem}.recommendations li{margin-bottom:.5rem}#verdict h3{margin:.8rem 0 .4rem}#verdict th{white-space:normal}#verdict table{font-size:.8rem}.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.4em;vertical-align:-.05em}
.table-wrap{overflow-x:auto}#summary-table td,#category-table td{white-space:nowrap}
.error{color:#b00020;font-weight:600}.chart{margin:1rem 0;position:relative}.chart canvas{width:100%;height:auto}
`;

/** Runs in the page: draws every chart from the inlined specs and makes every `table.sortable` sortable. */
export const CLIENT_SCRIPT = `
(() => {
  'use strict';
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.color = '#333333';
  const logTickLabel = ${logTickLabel.toString()};
  const placePointLabels = ${placePointLabels.toString()};
  const drawPointLabels = ${drawPointLabels.toString()};
  const specs = JSON.parse(document.getElementById('membench-charts').textContent);
  for (const spec of specs) {
    const canvas = document.getElementById('chart-' + spec.id);
    const options = Object.assign({}, spec.config.options, { responsive: true, maintainAspectRatio: true, aspectRatio: spec.width / spec.height, animation: false });
    for (const scale of Object.values(options.scales || {})) {
      if (scale.type === 'logarithmic') scale.ticks = Object.assign({}, scale.ticks, { callback: (value) => logTickLabel(Number(value)) });
    }
    new Chart(canvas, Object.assign({}, spec.config, { options, plugins: [{ id: 'membench-point-labels', afterDatasetsDraw: drawPointLabels }] }));
  }
  const key = (row, index) => {
    const cell = row.cells[index];
    const raw = cell ? cell.getAttribute('data-sort') : null;
    if (raw !== null) return raw === '' ? { missing: true } : { number: Number(raw) };
    return { text: cell ? cell.textContent.trim() : '' };
  };
  const compare = (a, b) => {
    if (a.missing || b.missing) return a.missing && b.missing ? 0 : a.missing ? 1 : -1;
    if ('number' in a && 'number' in b) return a.number - b.number;
    return String(a.text ?? a.number).localeCompare(String(b.text ?? b.number), undefined, { numeric: true });
  };
  const sortBy = (table, th, index) => {
    const descending = th.getAttribute('aria-sort') === 'ascending';
    for (const other of table.tHead.rows[0].cells) other.setAttribute('aria-sort', 'none');
    th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).map((row, position) => ({ row, position, key: key(row, index) }));
    rows.sort((a, b) => {
      const order = a.key.missing || b.key.missing ? compare(a.key, b.key) : (descending ? -1 : 1) * compare(a.key, b.key);
      return order || a.position - b.position;
    });
    for (const { row } of rows) body.appendChild(row);
  };
  for (const table of document.querySelectorAll('table.sortable')) {
    Array.from(table.tHead.rows[0].cells).forEach((th, index) => {
      th.addEventListener('click', () => sortBy(table, th, index));
      th.addEventListener('keydown', (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); sortBy(table, th, index); } });
    });
  }
})();
`;
