/**
 * Revenue per day as a uPlot bar chart (verified and pending USD), with a table of the same figures for
 * screen readers and keyboard users. uPlot draws on a canvas and styles through the CSSOM, which the
 * page's CSP allows (no inline style elements or attributes).
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface DayRevenue {
  day: string;
  verified: number;
  pending: number;
}

export function RevenueChart({ days }: { days: DayRevenue[] }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el || days.length === 0) return;
    const bars = uPlot.paths.bars!({ size: [0.6, 48] });
    const xs = days.map((d) => Date.parse(`${d.day}T12:00:00Z`) / 1000);
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 240,
        scales: {
          // A day either side, so a single day is a bar, not a spike across years.
          x: { time: true, auto: false, range: [xs[0]! - 86_400, xs[xs.length - 1]! + 86_400] },
          y: { range: (_u, _min, max) => [0, Math.max(0.01, max * 1.15)] },
        },
        legend: { live: false },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => `$${Number(t.toFixed(4))}`), size: 70 }],
        series: [
          {},
          { label: 'Verified (USD)', stroke: '#1d4ed8', fill: 'rgba(29, 78, 216, 0.35)', paths: bars },
          { label: 'Pending (USD)', stroke: '#b45309', fill: 'rgba(180, 83, 9, 0.3)', paths: bars },
        ],
      },
      [
        days.map((d) => Date.parse(`${d.day}T12:00:00Z`) / 1000),
        days.map((d) => d.verified),
        days.map((d) => d.pending),
      ],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 240 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days]);
  return (
    <figure class="chart-figure">
      <div ref={host} class="chart" role="img" aria-label="Revenue per day, verified and pending, in USD" />
      <figcaption class="sr-only">
        <table>
          <caption>Revenue per day</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Verified (USD)</th>
              <th scope="col">Pending (USD)</th>
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.day}>
                <th scope="row">{d.day}</th>
                <td>{d.verified.toFixed(6)}</td>
                <td>{d.pending.toFixed(6)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </figcaption>
    </figure>
  );
}
