/** The names beside the recall-vs-tokens chart's points: crowded points each keep a readable name. */
import { describe, expect, it } from 'vitest';
import { placePointLabels, type LabelArea, type LabelledPoint } from '../../reports/point-labels.js';
import { chartSpecs } from '../../reports/chart-specs.js';
import { smallRun } from './fixture.js';

const boxOf = (spot: { x: number; y: number }, point: LabelledPoint): LabelArea => ({
  left: spot.x,
  top: spot.y,
  right: spot.x + point.width,
  bottom: spot.y + point.height,
});
const pointBox = (point: LabelledPoint): LabelArea => ({
  left: point.x - point.radius,
  top: point.y - point.radius,
  right: point.x + point.radius,
  bottom: point.y + point.radius,
});
const overlap = (a: LabelArea, b: LabelArea): boolean =>
  a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

describe('point labels', () => {
  it('places the names of crowded points so that none covers another name or any point', () => {
    // bm25, hybrid, vector and entity of a default run: ~350 tokens, recall 0.74-0.87, markers of radius 7-10.
    const points: LabelledPoint[] = [
      { x: 372, y: 103, radius: 11, width: 30, height: 14 },
      { x: 389, y: 98, radius: 11, width: 42, height: 14 },
      { x: 388, y: 117, radius: 8, width: 40, height: 14 },
      { x: 375, y: 140, radius: 8, width: 36, height: 14 },
    ];
    const area = { left: 50, top: 50, right: 940, bottom: 380 };
    const spots = placePointLabels(points, area);
    const labels = spots.map((spot, index) => boxOf(spot, points[index]!));
    for (const [index, label] of labels.entries()) {
      expect(
        label.left >= area.left && label.right <= area.right && label.top >= area.top && label.bottom <= area.bottom,
      ).toBe(true);
      for (const point of points) expect(overlap(label, pointBox(point))).toBe(false);
      for (const other of labels.slice(index + 1)) expect(overlap(label, other)).toBe(false);
    }
    // A lone point's name goes right beside it.
    const lone = { x: 500, y: 200, radius: 7, width: 40, height: 14 };
    expect(placePointLabels([lone], area)).toEqual([{ x: 511, y: 193 }]);
  });

  it('names every point of the recall-vs-tokens chart', () => {
    const spec = chartSpecs(smallRun()).find((item) => item.id === 'recall-vs-tokens')!;
    const scatter = (spec.config.data.datasets as { type: string; pointLabel?: string }[]).filter(
      (set) => set.type === 'scatter',
    );
    expect(scatter.map((set) => set.pointLabel)).toEqual(['buffer', 'window(k=4)', 'window(k=2)']);
  });
});
