/**
 * The scale bench's plot (bench/scale.svg): hand-written SVG from the numbers, no dependency.
 * One small panel per figure, cost against N on a linear axis from 0 to `xMax`; each series'
 * measured points are dots joined by a solid line, its least-squares line (bench/scale-model.ts)
 * runs dashed from the last one to `xMax` (with two sizes or more), and a target, when the figure has one, is a red horizontal line.
 */
import { linearFit, valueAt } from './scale-model';

export interface Series {
  name: string;
  color: string;
  points: [n: number, value: number][];
}

export interface Panel {
  title: string;
  unit: string;
  series: Series[];
  /** A ceiling the figure should stay under (drawn in red). */
  target?: number;
}

const W = 380;
const H = 230;
const M = { left: 56, right: 12, top: 34, bottom: 34 };
const COLS = 2;

/** Rounds a range's top up to 1, 2 or 5 × a power of ten (axis ticks at quarters of it). */
export function niceCeil(x: number): number {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

/** Maps a value to the panel's pixel coordinates (y grows downwards). */
export function scaler(xMax: number, yMax: number): { x: (v: number) => number; y: (v: number) => number } {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  return { x: (v) => M.left + (v / xMax) * pw, y: (v) => M.top + ph - (Math.max(0, v) / yMax) * ph };
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (v: number): string => (v >= 1000 ? `${Math.round(v / 100) / 10}k` : `${Math.round(v * 10) / 10}`);
const r1 = (v: number): number => Math.round(v * 10) / 10;

function panelSvg(p: Panel, xMax: number): string {
  const fits = p.series.map((s) => linearFit(s.points));
  const tops = p.series.flatMap((s, i) => [...s.points.map(([, v]) => v), valueAt(fits[i]!, xMax)]);
  const yMax = niceCeil(Math.max(...tops.filter(Number.isFinite), p.target ?? 0, 1e-9) * 1.05);
  const sc = scaler(xMax, yMax);
  const out: string[] = [`<text x="${W / 2}" y="16" text-anchor="middle" font-weight="bold">${esc(p.title)}</text>`];
  out.push(`<text x="8" y="${M.top - 8}" font-size="10">${esc(p.unit)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const yv = (yMax * i) / 4;
    const xv = (xMax * i) / 4;
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${r1(sc.y(yv))}" y2="${r1(sc.y(yv))}" stroke="#ddd"/>`);
    out.push(`<text x="${M.left - 4}" y="${r1(sc.y(yv) + 4)}" text-anchor="end" font-size="10">${fmt(yv)}</text>`);
    out.push(`<text x="${r1(sc.x(xv))}" y="${H - M.bottom + 14}" text-anchor="middle" font-size="10">${fmt(xv)}</text>`);
  }
  out.push(`<text x="${W - M.right}" y="${H - 4}" text-anchor="end" font-size="10">N VMs</text>`);
  if (p.target !== undefined) {
    const y = r1(sc.y(p.target));
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y}" y2="${y}" stroke="#c00" stroke-width="1.5"/>`);
    out.push(`<text x="${W - M.right - 2}" y="${y - 3}" text-anchor="end" font-size="10" fill="#c00">target ${fmt(p.target)}</text>`);
  }
  p.series.forEach((s, i) => {
    const pts = [...s.points].filter(([, v]) => Number.isFinite(v)).sort((a, b) => a[0] - b[0]);
    if (pts.length === 0) return;
    const f = fits[i]!;
    const last = pts[pts.length - 1]!;
    const from: [number, number] = [last[0], valueAt(f, last[0])];
    if (Number.isFinite(f.slope))
      out.push(
        `<line x1="${r1(sc.x(from[0]))}" y1="${r1(sc.y(from[1]))}" x2="${r1(sc.x(xMax))}" y2="${r1(sc.y(valueAt(f, xMax)))}" stroke="${s.color}" stroke-dasharray="5,4"/>`,
      );
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts.map(([x, v]) => `${r1(sc.x(x))},${r1(sc.y(v))}`).join(' ')}"/>`);
    for (const [x, v] of pts) out.push(`<circle cx="${r1(sc.x(x))}" cy="${r1(sc.y(v))}" r="3.5" fill="${s.color}"/>`);
    out.push(`<text x="${M.left + 6}" y="${M.top + 12 + 13 * i}" font-size="10" fill="${s.color}">${esc(s.name)}</text>`);
  });
  return out.join('\n');
}

/** The whole figure: panels two to a row, a caption line at the bottom. */
export function scaleSvg(panels: readonly Panel[], o: { xMax: number; caption: string }): string {
  const rows = Math.ceil(panels.length / COLS);
  const width = W * COLS;
  const height = H * rows + 24;
  const body = panels.map((p, i) => `<g transform="translate(${(i % COLS) * W},${Math.floor(i / COLS) * H})">\n${panelSvg(p, o.xMax)}\n</g>`);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    ...body,
    `<text x="8" y="${height - 8}" font-size="10">${esc(o.caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
