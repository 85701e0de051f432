// The queue: each waiting job with its guaranteed start, predicted start, deadline and
// what blocks it; each running job with its nodes and time left. Filters by state and
// (operators) by user go to the API as query parameters, and the list comes a page at a
// time (the daemon says each waiting job's predicted start and place in the queue), so
// a redraw costs one page however deep the queue is.

import { badge, clock, h, pager, relative, resources, session, span, api } from "../lib.js";

const filters = { state: "", user: "" };
const ACTIVE = ["PENDING", "HELD", "RUNNING"];
const PAGE = 200;
let offset = 0; // kept across redraws; a new filter starts again at the first page

function filterBar(redraw) {
  const state = h("select", { id: "filter-state", "aria-label": "state",
    onchange: (e) => { filters.state = e.target.value; offset = 0; redraw(); } },
  ...["", ...ACTIVE, "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "REJECTED", "NODE_FAIL", "OUT_OF_MEMORY"]
    .map((s) => h("option", { value: s, selected: s === filters.state }, s || "waiting and running")));
  const user = session.operator
    ? h("input", { id: "filter-user", placeholder: "any user", value: filters.user, size: 12,
      "aria-label": "user",
      onchange: (e) => { filters.user = e.target.value.trim(); offset = 0; redraw(); } })
    : null;
  return h("div", { class: "filters" }, h("label", {}, "State ", state),
    user && h("label", {}, "User ", user));
}

// Why a job waits, from what the page already has: resources short right now, and how
// many jobs the plan starts before it (the job page asks the daemon for the detail).
function blocker(job, free) {
  const short = Object.entries(job.resources)
    .filter(([name, amount]) => amount > (free[name] ?? 0))
    .map(([name, amount]) => `${name}: ${amount} asked, ${Math.max(0, free[name] ?? 0)} free`);
  const ahead = job.queued_before ?? 0;
  const parts = [];
  if (job.job_state === "HELD") parts.push("held");
  if (short.length) parts.push(short.join("; "));
  if (ahead) parts.push(`${ahead} job${ahead > 1 ? "s" : ""} planned first`);
  return parts.join(" · ") || "starts at the next pass";
}

// The waiting tasks of one job array on one line, in the place of its first (like
// squeue): "12_[2-99]", with how many; a task that runs keeps a line of its own.
function foldArrays(jobs) {
  const folded = [];
  const arrays = new Map();
  for (const job of jobs) {
    const array = job.array_job_id;
    if (array === null || array === undefined || job.job_state !== "PENDING") {
      folded.push(job);
    } else if (arrays.has(array)) {
      arrays.get(array).tasks.push(job.array_task_id);
    } else {
      const line = { ...job, tasks: [job.array_task_id] };
      arrays.set(array, line);
      folded.push(line);
    }
  }
  for (const line of arrays.values()) {
    line.label = line.tasks.length > 1
      ? `${line.array_job_id}_[${ranges(line.tasks)}] (${line.tasks.length} tasks)`
      : `${line.array_job_id}_${line.tasks[0]}`;
  }
  return folded;
}

function ranges(indices) {
  const runs = [];
  for (const index of [...indices].sort((a, b) => a - b)) {
    const last = runs[runs.length - 1];
    if (last && index === last[1] + 1) last[1] = index; else runs.push([index, index]);
  }
  return runs.map(([a, b]) => (b > a ? `${a}-${b}` : `${a}`)).join(",");
}

function pendingTable(jobs, now, free) {
  if (!jobs.length) return h("p", { class: "muted" }, "No job waits.");
  jobs = foldArrays(jobs);
  return h("table", { id: "pending" },
    h("thead", {}, h("tr", {}, ["Job", "Name", "User", "State", "Resources", "Guaranteed start",
      "Predicted start", "Deadline", "What blocks it"].map((t) => h("th", {}, t)))),
    h("tbody", {}, jobs.map((j) => h("tr", { dataset: { job: j.job_id } },
      h("td", { class: "num" }, h("a", { href: `#/job/${j.job_id}` }, j.label ?? j.job_id)),
      h("td", {}, j.name), h("td", {}, j.user), h("td", {}, badge(j.job_state)),
      h("td", {}, resources(j.resources)),
      h("td", { class: "guaranteed", dataset: { time: j.guaranteed_start ?? "" } },
        clock(j.guaranteed_start), h("div", { class: "muted" }, relative(j.guaranteed_start, now))),
      h("td", { class: "predicted" }, clock(j.predicted_start ?? null),
        h("div", { class: "muted" }, relative(j.predicted_start ?? null, now))),
      h("td", {}, clock(j.deadline)),
      h("td", { class: "reason" }, blocker(j, free),
        h("div", { class: "muted" }, j.state_reason))))));
}

function runningTable(jobs, now) {
  if (!jobs.length) return h("p", { class: "muted" }, "No job runs.");
  return h("table", { id: "running" },
    h("thead", {}, h("tr", {}, ["Job", "Name", "User", "Nodes", "Started", "Time left",
      "Deadline"].map((t) => h("th", {}, t)))),
    h("tbody", {}, jobs.map((j) => h("tr", { dataset: { job: j.job_id } },
      h("td", { class: "num" }, h("a", { href: `#/job/${j.job_id}` }, j.job_id)),
      h("td", {}, j.name, j.suspended ? h("span", { class: "badge HELD" }, "suspended") : ""),
      h("td", {}, j.user),
      h("td", {}, Object.entries(j.nodes).map(([n, r]) => h("div", {}, `${n}: ${resources(r)}`))),
      h("td", {}, clock(j.start_time)),
      h("td", { class: "num" }, span(j.start_time + j.time_limit + j.suspended_seconds - now)),
      h("td", {}, clock(j.deadline))))));
}

function endedTable(jobs) {
  return h("table", { id: "ended" },
    h("thead", {}, h("tr", {}, ["Job", "Name", "User", "State", "Ended", "Exit", "Reason"]
      .map((t) => h("th", {}, t)))),
    h("tbody", {}, jobs.map((j) => h("tr", { dataset: { job: j.job_id } },
      h("td", { class: "num" }, h("a", { href: `#/job/${j.job_id}` }, j.job_id)),
      h("td", {}, j.name), h("td", {}, j.user), h("td", {}, badge(j.job_state)),
      h("td", {}, clock(j.end_time)),
      h("td", {}, j.exit_signal ? `signal ${j.exit_signal}` : (j.exit_code ?? "—")),
      h("td", {}, j.state_reason)))));
}

export async function render(_argument, redraw) {
  const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  for (const state of filters.state ? [filters.state] : ACTIVE) query.append("state", state);
  if (filters.user) query.set("user", filters.user);
  const [list, cluster] = await Promise.all([
    api("GET", `/v1/jobs?${query}`), api("GET", "/v1/cluster?limit=1"),
  ]);
  if (offset > 0 && offset >= list.total) { // the queue shrank under this page
    offset = Math.max(0, list.total - PAGE);
    return render(_argument, redraw);
  }
  const free = Object.fromEntries(Object.entries(cluster.schedulable)
    .map(([name, amount]) => [name, amount - (cluster.used[name] ?? 0)]));
  const now = cluster.now;
  const shown = list.jobs;
  const waiting = shown.filter((j) => j.job_state === "PENDING" || j.job_state === "HELD");
  const running = shown.filter((j) => j.job_state === "RUNNING");
  const ended = shown.filter((j) => !ACTIVE.includes(j.job_state));
  return h("div", {},
    h("h1", {}, "Queue"),
    h("p", { class: "muted" }, `Cluster time ${clock(now)} · policy ${cluster.policy} · ` +
      `${cluster.pending} waiting, ${cluster.running} running`),
    filterBar(redraw),
    pager("queue-pages", list.total, offset, PAGE, (to) => { offset = to; redraw(); }),
    h("h2", {}, "Waiting"), pendingTable(waiting, now, free),
    h("h2", {}, "Running"), runningTable(running, now),
    ended.length ? [h("h2", {}, "Ended"), endedTable(ended)] : null);
}
