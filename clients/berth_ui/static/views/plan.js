// The plan ahead as a Gantt chart: one row per node on node clusters (each bar where
// the job runs or where its reservation is held), one stacked-capacity lane on pool
// clusters. Running jobs are dark, planned ones light; a black tick marks a job's
// guaranteed start, a dashed red line its deadline, the green line now. Zoom with the
// buttons or the mouse wheel over the chart. A cluster of more than NODE_PAGE nodes is
// drawn a page of nodes at a time, with only the jobs on them (`/v1/schedule?node_limit=`):
// 4,096 nodes at once were 123,000 px of rows, 331,000 bars and 35 s to draw, again at
// every event.
//
// The SVG carries its scale (data-t0, data-px-per-second, data-left) and each bar its
// job, node and times, so a test can check the drawing against the API's plan.

import { api, clock, colour, h, pager, resources, span } from "../lib.js";

const LEFT = 110; // px for the row labels
const ROW = 30;
const AXIS = 26;
const POOL_HEIGHT = 260;
const NODE_PAGE = 50; // node rows a page
const zoom = { seconds: null }; // null: fit the whole plan
let nodeOffset = 0; // the first node row drawn (kept across redraws)

function niceStep(seconds) {
  const steps = [60, 300, 600, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 604800];
  return steps.find((s) => seconds / s <= 10) ?? 2592000;
}

// First-fit of [start, end) x [y, y + height) boxes in a lane of height 1.
function stack(items) {
  const placed = [];
  for (const item of items) {
    const overlapping = placed.filter((p) => p.start < item.end && item.start < p.end);
    const candidates = [0, ...overlapping.map((p) => p.y + p.height)].sort((a, b) => a - b);
    const fits = (y) => y + item.height <= 1.0001 && overlapping.every(
      (p) => y + item.height <= p.y + 1e-9 || p.y + p.height <= y + 1e-9);
    item.y = candidates.find(fits) ?? candidates[candidates.length - 1];
    placed.push(item);
  }
  return placed;
}

function share(amounts, capacity) {
  let most = 0;
  for (const [name, amount] of Object.entries(amounts)) {
    if (capacity[name]) most = Math.max(most, amount / capacity[name]);
  }
  return Math.min(1, most || 0.05);
}

function draw(schedule, cluster, width, paged) {
  const now = schedule.now;
  const windows = [...schedule.running, ...schedule.planned].filter((w) => w.start !== null);
  const lastEnd = Math.max(now + 600, ...windows.map((w) => w.end ?? now),
    ...windows.map((w) => w.deadline ?? 0));
  const seconds = zoom.seconds ?? Math.ceil((lastEnd - now) * 1.08);
  const t0 = now - Math.round(seconds * 0.04);
  const perSecond = (width - LEFT - 10) / seconds;
  const x = (t) => LEFT + (t - t0) * perSecond;
  // Per node when the plan says where every reservation is held (every policy on the
  // daemon's nodes), and always a page of a large cluster's nodes; a plan with a window
  // on no named node gets the capacity lane.
  const placed = (w) => Object.keys(w.nodes).length > 0;
  const byNode = paged || (windows.some(placed) && schedule.planned.every(placed));
  const rows = byNode ? cluster.nodes.map((n) => n.name) : ["capacity"];
  const nodeNamed = new Map(cluster.nodes.map((n) => [n.name, n]));
  const rowOf = new Map(rows.map((name, i) => [name, i]));
  const rowHeight = byNode ? ROW : POOL_HEIGHT;
  const height = AXIS + rows.length * rowHeight + 4;
  const svg = h("svg", { class: "gantt", width, height, viewBox: `0 0 ${width} ${height}`,
    "data-t0": t0, "data-px-per-second": perSecond, "data-left": LEFT, role: "img",
    "aria-label": "Gantt chart of the plan" });
  const step = niceStep(seconds);
  for (let t = Math.ceil(t0 / step) * step; t < t0 + seconds; t += step) {
    svg.append(h("line", { class: "grid", x1: x(t), x2: x(t), y1: AXIS - 4, y2: height }),
      h("text", { x: x(t) + 2, y: 12 }, clock(t).slice(step >= 86400 ? 5 : 11, 16)));
  }
  rows.forEach((name, i) => {
    const node = nodeNamed.get(name);
    const label = h("text", { x: 4, y: AXIS + i * rowHeight + rowHeight / 2 + 4 }, name);
    if (node && node.state !== "up") label.append(` (${node.state})`);
    svg.append(h("line", { class: "grid", x1: 0, x2: width, y1: AXIS + i * rowHeight,
      y2: AXIS + i * rowHeight }), label);
  });
  const capacityOf = (name) => nodeNamed.get(name)?.resources ?? {};
  const lanes = new Map(rows.map((r) => [r, []]));
  for (const w of windows) {
    const places = byNode ? Object.entries(w.nodes) : [["capacity", w.resources]];
    for (const [node, amounts] of places) {
      const capacity = byNode ? capacityOf(node) : cluster.capacity;
      lanes.get(node)?.push({ w, node, start: w.start, end: w.end, height: share(amounts, capacity) });
    }
  }
  lanes.forEach((items, node) => {
    const top = AXIS + rowOf.get(node) * rowHeight + 2;
    const inner = rowHeight - 4;
    for (const { w, y, height: part } of stack(items)) {
      const running = w.job_state === "RUNNING";
      const bx = Math.max(LEFT, x(w.start));
      const bw = Math.max(1.5, x(w.end) - bx);
      const by = top + y * inner;
      const bh = Math.max(2, part * inner - 1);
      const bar = h("rect", { class: running ? "bar-running" : "bar-planned", x: bx, y: by,
        width: bw, height: bh, rx: 2, fill: colour(w.job_id), "fill-opacity": running ? 1 : 0.45,
        stroke: colour(w.job_id), "data-job": w.job_id, "data-node": node,
        "data-start": w.start, "data-end": w.end },
      h("title", {}, `job ${w.job_id} ${w.name} (${w.user}) ${w.job_state}\n` +
        `${clock(w.start)} → ${clock(w.end)}\nguaranteed ${clock(w.guaranteed_start)}` +
        `${w.deadline ? `\ndeadline ${clock(w.deadline)}` : ""}\n${resources(w.resources)}`));
      bar.addEventListener("click", () => { location.hash = `#/job/${w.job_id}`; });
      svg.append(bar);
      if (bw > 28 && bh >= 10) {
        svg.append(h("text", { class: "bar-label", x: bx + 3, y: by + Math.min(bh, 16) - 4 }, w.job_id));
      }
      if (w.guaranteed_start !== null && !running) {
        svg.append(h("line", { class: "guarantee", x1: x(w.guaranteed_start), x2: x(w.guaranteed_start),
          y1: by, y2: by + bh, "data-job": w.job_id }));
      }
      if (w.deadline !== null) {
        svg.append(h("line", { class: "deadline", x1: x(w.deadline), x2: x(w.deadline),
          y1: by - 1, y2: by + bh + 1, "data-job": w.job_id }));
      }
    }
  });
  svg.append(h("line", { class: "now", x1: x(now), x2: x(now), y1: AXIS - 6, y2: height }));
  return { svg, seconds };
}

export async function render(_argument, redraw) {
  const [cluster, { partitions }] = await Promise.all([
    api("GET", `/v1/cluster?limit=${NODE_PAGE}&offset=${nodeOffset}`),
    api("GET", "/v1/partitions?limit=10000"),
  ]);
  if (cluster.nodes.length === 0 && nodeOffset > 0) { // (nodes removed since)
    nodeOffset = 0;
    return render(_argument, redraw);
  }
  // All the nodes on one page: the whole plan, as it is (a plan on the pool included);
  // more: the jobs on this page's nodes, each with its shares of them only.
  const paged = cluster.node_total > NODE_PAGE;
  const nodes = `&node_offset=${nodeOffset}&node_limit=${NODE_PAGE}`;
  const schedule = await api("GET", "/v1/schedule?limit=10000" + (paged ? nodes : ""));
  // Gang partitions' jobs take turns in the matrix (the Gang page), not in this plan.
  const gang = new Set(partitions.filter((p) => p.policy === "gang").map((p) => p.name));
  const inGang = (w) => gang.has(w.partition);
  const hiddenGang = [...schedule.running, ...schedule.planned].filter(inGang).length;
  schedule.running = schedule.running.filter((w) => !inGang(w));
  schedule.planned = schedule.planned.filter((w) => !inGang(w));
  const width = Math.max(720, (document.getElementById("view").clientWidth || 1100) - 4);
  const { svg, seconds } = draw(schedule, cluster, width, paged);
  const set = (value) => () => { zoom.seconds = value; redraw(); };
  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    zoom.seconds = Math.max(60, Math.round(seconds * (event.deltaY > 0 ? 1.25 : 0.8)));
    redraw();
  }, { passive: false });
  const zoomBar = h("div", { class: "zoom" }, "Show ",
    [["1 h", 3600], ["6 h", 21600], ["1 day", 86400], ["1 week", 604800], ["all", null]].map(
      ([label, value]) => h("button", { class: "action", type: "button", onclick: set(value) }, label)),
    h("span", { class: "muted" }, `window ${span(seconds)}`));
  const hidden = schedule.planned_total - schedule.planned.length;
  const where = paged ? ` on these ${cluster.nodes.length} of ${cluster.node_total} nodes` : "";
  return h("div", {}, h("h1", {}, "Plan"),
    h("p", { class: "muted" }, `Policy ${schedule.policy} · ${schedule.running.length} running, ` +
      `${schedule.planned_total} planned${where}` +
      (hidden > 0 ? ` (${hidden} beyond this page not drawn)` : "") +
      (hiddenGang ? ` · ${hiddenGang} gang jobs on the Gang page` : "")),
    pager("plan-nodes", cluster.node_total, nodeOffset, NODE_PAGE,
      (to) => { nodeOffset = to; redraw(); }),
    zoomBar, h("div", { class: "gantt-wrap" }, svg),
    h("p", { class: "legend" }, "Dark: running · light: planned (a reservation) · black tick: " +
      "guaranteed start · dashed red: deadline · green: now. Click a bar for its job."));
}
