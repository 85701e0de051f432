// Nodes: state and reason, load per resource, the jobs on each. Operators can drain,
// resume or mark a node down; the daemon's refusal (a drain that would break a
// guarantee) is shown as it says it.

import { act, api, outcomeArea, badge, h, pager, session } from "../lib.js";

let reasonText = ""; // kept across redraws
const PAGE = 200; // nodes a page: a center's thousands come a page at a time
let offset = 0;

function load(node) {
  return Object.entries(node.resources).map(([name, total]) => {
    const used = node.used[name] ?? 0;
    const fill = h("span", {});
    fill.style.width = `${Math.round((100 * used) / total)}%`;
    return h("div", { class: "load", dataset: { resource: name } },
      h("span", { class: "bar" }, fill), `${name} ${used}/${total}`);
  });
}

export async function render(_argument, redraw) {
  const [cluster, schedule] = await Promise.all([
    api("GET", `/v1/cluster?limit=${PAGE}&offset=${offset}`), api("GET", "/v1/schedule?limit=1"),
  ]);
  const jobsOn = new Map();
  for (const w of schedule.running) {
    for (const node of Object.keys(w.nodes)) {
      if (!jobsOn.has(node)) jobsOn.set(node, []);
      jobsOn.get(node).push(w);
    }
  }
  const result = outcomeArea("node-result");
  const reason = h("input", { id: "node-reason", placeholder: "reason (shown on the node)",
    size: 30, "aria-label": "reason", value: reasonText,
    oninput: (e) => { reasonText = e.target.value; } });
  const actions = (node) => {
    if (!session.operator) return null;
    const path = (verb) => `/v1/admin/nodes/${encodeURIComponent(node.name)}/${verb}`;
    const run = (verb, label) => () =>
      act(result, `${label} ${node.name}`, "POST", path(verb),
        verb === "resume" ? undefined : { reason: reasonText || `${label} from the dashboard` },
        redraw);
    return [
      node.state === "up" && h("button", { class: "action", type: "button",
        dataset: { action: "drain", node: node.name }, onclick: run("drain", "Drain") }, "Drain"),
      node.state !== "up" && h("button", { class: "action", type: "button",
        dataset: { action: "resume", node: node.name }, onclick: run("resume", "Resume") }, "Resume"),
      node.state !== "down" && h("button", { class: "action danger", type: "button",
        dataset: { action: "down", node: node.name }, onclick: run("down", "Mark down") }, "Down"),
    ];
  };
  return h("div", {}, h("h1", {}, "Nodes"),
    h("p", { class: "muted" }, `${cluster.node_total} nodes · ${cluster.running} running, ` +
      `${cluster.pending} waiting`),
    pager("node-pages", cluster.node_total, offset, PAGE, (to) => { offset = to; redraw(); }),
    session.operator ? h("div", { class: "filters" }, reason) : null, result,
    h("table", { id: "nodes" },
      h("thead", {}, h("tr", {}, ["Node", "State", "Reason", "Load", "Jobs",
        session.operator ? "Actions" : null].filter(Boolean).map((t) => h("th", {}, t)))),
      h("tbody", {}, cluster.nodes.map((node) => h("tr", { dataset: { node: node.name, state: node.state } },
        h("td", {}, node.name), h("td", {}, badge(node.state.toUpperCase())),
        h("td", {}, node.reason), h("td", {}, load(node)),
        h("td", {}, (jobsOn.get(node.name) ?? []).map((w) =>
          h("a", { href: `#/job/${w.job_id}`, class: "job-link" }, `${w.job_id} `))),
        session.operator ? h("td", {}, actions(node)) : null)))));
}
