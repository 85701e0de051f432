// One job: its state, guarantee and prediction, what blocks it, what it waits for (links
// to those jobs), exit status and output paths, and its history of events (guarantee
// changes included), oldest first.
// Its owner, operators and its account's coordinator may cancel it; operators and the
// coordinator may hold and release it. A viewer's dashboard shows no action.

import { act, api, outcomeArea, badge, clock, h, relative, resources, session, span } from "../lib.js";

function field(label, ...value) {
  return [h("dt", {}, label), h("dd", {}, ...value)];
}

function describe(event) {
  const { id, kind, time, job_id, ...rest } = event;
  return Object.entries(rest).map(([k, v]) =>
    `${k}=${typeof v === "number" && v > 1e9 && /start|end|time|previous/.test(k) ? clock(v) : JSON.stringify(v)}`)
    .join(" ");
}

export async function render(argument, redraw) {
  const id = Number.parseInt(argument, 10);
  if (!Number.isInteger(id)) return h("p", { class: "error" }, "No job number in the address.");
  const [job, start] = await Promise.all([
    api("GET", `/v1/jobs/${id}`), api("GET", `/v1/jobs/${id}/start`),
  ]);
  const events = [];
  for (let after = 0, page = 0; page < 20 && after !== null; page += 1) {
    const answer = await api("GET", `/v1/jobs/${id}/events?after=${after}&limit=1000`);
    events.push(...answer.events);
    after = answer.next_after;
  }
  const now = start.computed_at;
  const result = outcomeArea("job-result");
  const waiting = job.job_state === "PENDING" || job.job_state === "HELD";
  const actions = [];
  const manages = session.operator
    || (session.who?.role === "coordinator" && session.who.account === job.account);
  if (session.who?.role !== "viewer" && (waiting || job.job_state === "RUNNING")) {
    actions.push(h("button", { class: "action danger", type: "button", dataset: { action: "cancel" },
      onclick: () => act(result, `Cancel job ${id}`, "DELETE", `/v1/jobs/${id}`, undefined, redraw) },
    "Cancel"));
  }
  // Its user holds it too (a hold of their own, which they may release); an operator's or
  // coordinator's hold only they release.
  const own = session.who?.role !== "viewer" && session.who?.user === job.user;
  const routes = manages ? `/v1/admin/jobs/${id}` : `/v1/jobs/${id}`;
  if ((manages || own) && job.job_state === "PENDING") {
    actions.push(h("button", { class: "action", type: "button", dataset: { action: "hold" },
      onclick: () => act(result, `Hold job ${id}`, "POST", `${routes}/hold`,
        { reason: "held from the dashboard" }, redraw) }, "Hold"));
  }
  if ((manages || (own && job.hold === "user")) && job.job_state === "HELD") {
    actions.push(h("button", { class: "action", type: "button", dataset: { action: "release" },
      onclick: () => act(result, `Release job ${id}`, "POST", `${routes}/release`,
        undefined, redraw) }, "Release"));
  }
  const blocked = start.blocked_by;
  const guaranteeChanges = events.filter((e) => e.kind === "job.guarantee_changed");
  return h("div", {},
    h("h1", {}, `Job ${id} · ${job.name} `, badge(job.job_state)),
    h("div", {}, actions), result,
    h("dl", { class: "kv", id: "job-detail" },
      field("User", job.user),
      field("Partition", job.partition),
      field("State", job.job_state, " — ", job.state_reason),
      field("Resources", resources(job.resources)),
      field("Time limit", span(job.time_limit)),
      field("Submitted", clock(job.submit_time)),
      field("Guaranteed start", clock(start.guaranteed_start), " ",
        h("span", { class: "muted" }, relative(start.guaranteed_start, now))),
      field("Guaranteed end", clock(start.guaranteed_end)),
      field("Predicted start", clock(start.predicted_start), " ",
        h("span", { class: "muted" }, start.based_on)),
      field("Deadline", clock(job.deadline)),
      job.array_job_id === null ? null : field("Array", `task ${job.array_task_id} of array `,
        h("a", { href: `#/job/${job.array_job_id}` }, job.array_job_id)),
      job.dependency ? field("Dependency", h("code", {}, job.dependency),
        job.kill_on_invalid_dep ? "" : " (held, not cancelled, if it can never be met)") : null,
      (start.dependencies ?? []).length ? field("Waits for", waitsFor(start, now)) : null,
      field("Started", clock(job.start_time)),
      field("Ended", clock(job.end_time)),
      field("Nodes", Object.entries(job.nodes).map(([n, r]) => `${n} (${resources(r)})`).join(", ") || "—"),
      field("Command", job.command ? h("code", {}, job.command)
        : job.batch_script ? ["batch script", job.argv?.length ? " with arguments " : "",
          job.argv?.length ? h("code", {}, job.argv.join(" ")) : ""] : "—"),
      field("Exit", job.exit_signal ? `killed by signal ${job.exit_signal}`
        : job.exit_code === null ? "—" : `status ${job.exit_code}`),
      field("Used", used(job)),
      field("Output", job.output ?? "—"), field("Error output", job.error ?? "—"),
      field("Working directory", job.chdir ?? "—"),
      blocked ? field("Blocked by", `${blocked.jobs_ahead} jobs ahead; waiting for ` +
        Object.entries(blocked.resources).map(([r, v]) => `${r} (${v.requested} asked, ${v.free_now} free)`)
          .join(", ") + (blocked.running_jobs_to_end.length
          ? `; jobs ${blocked.running_jobs_to_end.join(", ")} to end` : "")) : null),
    h("h2", {}, `Guarantee changes (${guaranteeChanges.length})`),
    guaranteeChanges.length ? h("ul", {}, guaranteeChanges.map((e) => h("li", {},
      `${clock(e.time)}: ${clock(e.previous ?? null)} → ${clock(e.guaranteed_start ?? null)}`)))
      : h("p", { class: "muted" }, "Its guarantee never moved."),
    h("h2", {}, "History"),
    h("table", { id: "job-events" },
      h("thead", {}, h("tr", {}, ["#", "Time", "Event", "Details"].map((t) => h("th", {}, t)))),
      h("tbody", {}, events.map((e) => h("tr", {},
        h("td", { class: "num" }, e.id), h("td", {}, clock(e.time)),
        h("td", {}, e.kind), h("td", {}, describe(e)))))));
}

// What the job used as its node measured it (node agents), beside what it held.
function used(job) {
  const u = job.usage;
  if (!u) return job.end_time === null ? "measured at its end" : "not measured";
  const held = (job.resources.cpus ?? 0) * Math.max((job.end_time ?? 0) - (job.start_time ?? 0), 0);
  const parts = [];
  if (u.cpu_seconds !== undefined) {
    parts.push(`${u.cpu_seconds.toFixed(1)} CPU-seconds` +
      (held ? ` (${(100 * u.cpu_seconds / held).toFixed(0)}% of ${held} held)` : ""));
  }
  if (u.peak_memory_bytes !== undefined) {
    parts.push(`peak memory ${(u.peak_memory_bytes / 2 ** 30).toFixed(2)} GiB` +
      (job.resources.mem_gb ? ` of ${job.resources.mem_gb} GiB asked` : ""));
  }
  return parts.join("; ") || "—";
}

// What it still waits for, each a link, and the one whose promise sets its earliest start.
function waitsFor(start, now) {
  return h("ul", { id: "job-waits-for" }, start.dependencies.map((d) => h("li", {},
    h("a", { href: `#/job/${d.job_id}` }, `job ${d.job_id}`),
    ` (${d.kind === "throttle" ? "its array's limit" : d.kind}, ${d.job_state ?? "gone"}), promised `,
    `${d.kind === "after" ? "to start" : "to end"} by ${clock(d.promised)} `,
    h("span", { class: "muted" }, relative(d.promised, now)),
    d.job_id === start.waits_for_job ? h("strong", {}, " — sets its earliest start") : "")));
}
