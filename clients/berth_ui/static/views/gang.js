// Gang partitions: each one's time-slot matrix, rows x processors, each cell coloured by
// the job that holds it in that row (Zhou, Brent and Walsh's matrix). The row running
// this slot is marked; waiting jobs are listed after.

import { api, clock, colour, h } from "../lib.js";

function matrix(m) {
  const table = h("table", { class: "matrix", dataset: { partition: m.name } },
    h("thead", {}, h("tr", {}, h("th", {}, "row"),
      m.processors.map((p) => h("th", { title: `${p.node} #${p.index}` }, p.index)))));
  const body = h("tbody", {});
  m.rows.forEach((row, r) => {
    const cells = row.map((job, p) => {
      const cell = h("td", { title: job === null ? "free" : `job ${job} on ${m.processors[p].node}`,
        dataset: { job: job ?? "" } }, job ?? "");
      if (job !== null) {
        cell.style.background = colour(job);
        cell.style.color = "#fff";
      }
      return cell;
    });
    body.append(h("tr", { class: r === m.running_row ? "running" : "" },
      h("th", {}, r === m.running_row ? `▶ ${r}` : r), cells));
  });
  table.append(body);
  return table;
}

export async function render() {
  const { partitions } = await api("GET", "/v1/partitions?limit=10000");
  const gangs = partitions.filter((p) => p.policy === "gang");
  if (!gangs.length) {
    return h("div", {}, h("h1", {}, "Gang partitions"), h("p", { class: "muted" },
      "No gang partition. An operator makes one with `berth partition create NAME --nodes ...`."));
  }
  const matrices = await Promise.all(
    gangs.map((p) => api("GET", `/v1/partitions/${encodeURIComponent(p.name)}/matrix`)));
  return h("div", {}, h("h1", {}, "Gang partitions"), matrices.map((m) => h("section", {},
    h("h2", {}, `${m.name} · ${m.scheme} · ${m.slot_seconds} s slots`),
    h("p", { class: "muted" }, `Last boundary ${clock(m.last_boundary)} · next ` +
      `${clock(m.next_boundary)} · waiting: ${m.waiting.join(", ") || "none"}`),
    matrix(m))));
}
