/**
 * Names written beside a scatter chart's points, placed so that no name covers another name or a
 * point: in the recall-vs-tokens chart, settings of nearly the same cost and recall (bm25,
 * hybrid, vector and entity at ~350 tokens) sit on top of each other, and the legend alone
 * cannot say which marker is which. Both functions are self-contained (no imports, no outer
 * names but each other) because report.html inlines their source, as it does logTickLabel's.
 */
import type { Chart } from 'chart.js';

/** A point on the canvas (its centre and marker radius) and the size of its label's box. */
export interface LabelledPoint {
  x: number;
  y: number;
  radius: number;
  width: number;
  height: number;
}

/** The drawing area a label must stay inside. */
export interface LabelArea {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/**
 * The top-left corner of each point's label. Tried in turn: right of the point, left, above,
 * below, then the diagonals, then each of those one and two label heights further out; the first
 * spot inside `area` that overlaps no point and no label placed before wins. A label with no
 * free spot goes right of its point.
 */
export function placePointLabels(points: readonly LabelledPoint[], area: LabelArea): { x: number; y: number }[] {
  const gap = 4;
  const boxes = points.map((point) => ({
    left: point.x - point.radius,
    top: point.y - point.radius,
    right: point.x + point.radius,
    bottom: point.y + point.radius,
  }));
  const overlaps = (a: LabelArea, b: LabelArea): boolean =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  return points.map((point) => {
    const candidates: { x: number; y: number }[] = [];
    for (const step of [0, 1, 2]) {
      const out = point.radius + gap + step * point.height;
      const middle = point.y - point.height / 2;
      candidates.push(
        { x: point.x + out, y: middle },
        { x: point.x - out - point.width, y: middle },
        { x: point.x - point.width / 2, y: point.y - out - point.height },
        { x: point.x - point.width / 2, y: point.y + out },
        { x: point.x + out, y: point.y - out - point.height },
        { x: point.x + out, y: point.y + out },
        { x: point.x - out - point.width, y: point.y - out - point.height },
        { x: point.x - out - point.width, y: point.y + out },
      );
    }
    const free = candidates.find((spot) => {
      const box = { left: spot.x, top: spot.y, right: spot.x + point.width, bottom: spot.y + point.height };
      const inside =
        box.left >= area.left && box.right <= area.right && box.top >= area.top && box.bottom <= area.bottom;
      return inside && !boxes.some((other) => overlaps(box, other));
    });
    const spot = free ?? candidates[0]!;
    boxes.push({ left: spot.x, top: spot.y, right: spot.x + point.width, bottom: spot.y + point.height });
    return spot;
  });
}

/** A chart.js hook (after the datasets are drawn): writes each dataset's `pointLabel` beside its first point, with a thin line to it when placed further out. */
export function drawPointLabels(chart: Chart): void {
  const ctx = chart.ctx;
  const size = 12;
  const labelled = chart.data.datasets
    .map((dataset, index) => ({
      text: (dataset as { pointLabel?: string }).pointLabel,
      element: chart.getDatasetMeta(index).data[0],
      radius: Number((dataset as { pointRadius?: number }).pointRadius ?? 3),
      visible: chart.isDatasetVisible(index),
    }))
    .filter((item) => typeof item.text === 'string' && item.element !== undefined && item.visible);
  if (labelled.length === 0) return;
  ctx.save();
  ctx.font = `${size}px ${chart.options.font?.family ?? 'sans-serif'}`;
  ctx.textBaseline = 'top';
  ctx.fillStyle = '#333333';
  ctx.strokeStyle = '#999999';
  ctx.lineWidth = 1;
  const points = labelled.map((item) => ({
    x: item.element!.x,
    y: item.element!.y,
    radius: item.radius + 1,
    width: ctx.measureText(item.text!).width,
    height: size + 2,
  }));
  const spots = placePointLabels(points, chart.chartArea);
  spots.forEach((spot, index) => {
    const point = points[index]!;
    const nearestX = Math.max(spot.x, Math.min(point.x, spot.x + point.width));
    const nearestY = Math.max(spot.y, Math.min(point.y, spot.y + point.height));
    if (Math.hypot(nearestX - point.x, nearestY - point.y) > point.radius + 8) {
      ctx.beginPath();
      ctx.moveTo(point.x, point.y);
      ctx.lineTo(nearestX, nearestY);
      ctx.stroke();
    }
    ctx.fillText(labelled[index]!.text!, spot.x, spot.y + 1);
  });
  ctx.restore();
}
