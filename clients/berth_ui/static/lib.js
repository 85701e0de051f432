// Shared helpers: building DOM safely, calling the API with the session's token, and
// showing cluster times. Every text goes in through textContent (never innerHTML), so
// job names and reasons cannot inject markup.

const TOKEN_KEY = "berth.token";

export const session = {
  get token() { return sessionStorage.getItem(TOKEN_KEY); },
  set token(value) {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
  who: null, // {user, role} from /v1/whoami
  get operator() { return this.who?.role === "operator"; },
};

// h("td", {class: "num", dataset: {job: 3}}, "text", child, ...)
export function h(tag, attributes = {}, ...children) {
  const svg = ["svg", "rect", "line", "text", "g", "title", "path"].includes(tag);
  const node = svg
    ? document.createElementNS("http://www.w3.org/2000/svg", tag)
    : document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class" && !svg) node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = body?.error ?? {};
    super(error.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error.code;
    this.field = error.field;
  }
}

export async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${session.token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

const pad = (n) => String(n).padStart(2, "0");

// A cluster time (Unix seconds) as local "2026-11-23 17:05:09".
export function clock(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const t = new Date(seconds * 1000);
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ` +
    `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
}

// A span of seconds as "2d 3h", "5h 02m", "4m 05s" or "12s".
export function span(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const s = Math.max(0, Math.round(seconds));
  if (s >= 86400) return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${s}s`;
}

// "in 5m 03s" / "3m 10s ago" against the cluster's now.
export function relative(seconds, now) {
  if (seconds === null || seconds === undefined) return "";
  return seconds >= now ? `in ${span(seconds - now)}` : `${span(now - seconds)} ago`;
}

export const badge = (state) => h("span", { class: `badge ${state}` }, state);

export function resources(amounts) {
  return Object.entries(amounts ?? {}).map(([k, v]) => `${k}=${v}`).join(" ");
}

// A readable colour per job id (the Gantt and the gang matrix agree on it).
export function colour(jobId) {
  const hue = (jobId * 137.508) % 360;
  return `hsl(${hue.toFixed(0)} 62% 52%)`;
}

export function notice(kind, text) {
  return h("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

// The last action's outcome, shown again by the next drawing (an event may redraw the
// view right after) until it is 20 seconds old.
let flashed = null;

export function outcomeArea(id) {
  const area = h("div", { id });
  if (flashed && Date.now() - flashed.at < 20000) area.append(notice(flashed.kind, flashed.text));
  return area;
}

// Runs an action; shows the daemon's answer (its refusal included) in `where`.
export async function act(where, label, method, path, body, after) {
  try {
    await api(method, path, body);
    flashed = { kind: "ok", text: `${label}: done`, at: Date.now() };
  } catch (error) {
    flashed = { kind: "error", text: `${label} refused: ${error.message}`, at: Date.now() };
  }
  where.replaceChildren(notice(flashed.kind, flashed.text));
  if (flashed.kind === "ok" && after) after();
}

// Earlier / later buttons over a list the daemon pages (``offset`` from 0 in steps of
// ``size``); ``go(offset)`` draws another page. Nothing when it all fits on one page.
export function pager(id, total, offset, size, go) {
  if (total <= size) return null;
  return h("div", { class: "pager", id },
    h("button", { class: "page-back", disabled: offset === 0,
      onclick: () => go(Math.max(0, offset - size)) }, "← earlier"),
    ` ${offset + 1}–${Math.min(offset + size, total)} of ${total} `,
    h("button", { class: "page-on", disabled: offset + size >= total,
      onclick: () => go(offset + size) }, "later →"));
}
