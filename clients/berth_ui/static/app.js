// The dashboard's shell: sign-in, the hash router (#/queue, #/plan, #/nodes, #/gang,
// #/policy, #/job/ID) and the live event stream that redraws the current view.
//
// The stream is /v1/events read with fetch (so the token travels in a header, never in
// a URL). Each event schedules one redraw, coalesced over a quarter second: a burst of
// a hundred events costs one round of API calls, and an idle cluster costs none. After
// a drop it reconnects with Last-Event-ID, backing off up to 30 s.

import { ApiError, api, session } from "./lib.js";
import * as gang from "./views/gang.js";
import * as job from "./views/job.js";
import * as nodes from "./views/nodes.js";
import * as plan from "./views/plan.js";
import * as policy from "./views/policy.js";
import * as queue from "./views/queue.js";

const VIEWS = { queue, plan, nodes, gang, policy, job };
const $ = (id) => document.getElementById(id);

let current = null; // {view, argument}
let redrawTimer = null;
let streamAbort = null;

function route() {
  const [name, argument] = location.hash.replace(/^#\/?/, "").split("/");
  const view = VIEWS[name] ?? queue;
  return { view, name: VIEWS[name] ? name : "queue", argument };
}

async function draw() {
  const target = $("view");
  current = route();
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.view === current.name);
  }
  try {
    const content = await current.view.render(current.argument, scheduleRedraw);
    target.replaceChildren(content);
    target.dataset.view = current.name;
    target.dataset.drawn = String(Date.now());
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return signOut("Your token was refused.");
    const message = error instanceof ApiError ? error.message : String(error);
    target.replaceChildren(Object.assign(document.createElement("p"), {
      className: "error", textContent: `Could not load this view: ${message}`,
    }));
  }
}

// Whether the user is typing or choosing in a field of the view: a redraw would replace
// it under their hands, so it waits until they leave the field.
function busy() {
  const active = document.activeElement;
  return active !== null && $("view").contains(active) &&
    ["INPUT", "SELECT", "TEXTAREA"].includes(active.tagName);
}

let deferred = false;

function scheduleRedraw() {
  if (redrawTimer !== null) return;
  redrawTimer = setTimeout(() => {
    redrawTimer = null;
    if (busy()) deferred = true;
    else draw();
  }, 250);
}

function setStatus(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = `status ${kind}`;
}

async function listen() {
  let lastId = null;
  let delay = 1000;
  while (session.token) {
    streamAbort = new AbortController();
    try {
      const headers = { Authorization: `Bearer ${session.token}` };
      if (lastId !== null) headers["Last-Event-ID"] = lastId;
      const response = await fetch("/v1/events", { headers, signal: streamAbort.signal });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      setStatus("live", "live");
      delay = 1000;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = frame.match(/^id: (\d+)$/m);
          if (id) {
            lastId = id[1];
            document.body.dataset.lastEvent = lastId;
            scheduleRedraw();
          }
        }
      }
    } catch (error) {
      if (error.name === "AbortError") return;
    }
    setStatus("reconnecting…", "down");
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 30000);
  }
}

function showSignIn(message = "") {
  $("signin").hidden = false;
  $("nav").hidden = true;
  $("signout").hidden = true;
  $("who").textContent = "";
  $("view").replaceChildren();
  $("signin-error").textContent = message;
}

function signOut(message = "") {
  session.token = null;
  session.who = null;
  streamAbort?.abort();
  setStatus("", "");
  showSignIn(message);
}

async function start() {
  try {
    session.who = await api("GET", "/v1/whoami");
  } catch (error) {
    const status = error instanceof ApiError ? error.status : 0;
    if (status === 401) return signOut("That token was refused.");
    if (status === 403) return signOut(`That token may not use the dashboard: ${error.message}`);
    return signOut(`The daemon did not answer: ${error.message ?? error}`);
  }
  $("signin").hidden = true;
  $("nav").hidden = false;
  $("signout").hidden = false;
  $("who").textContent = `${session.who.user} (${session.who.role})`;
  for (const item of document.querySelectorAll("[data-operator]")) item.hidden = !session.operator;
  await draw();
  listen();
}

$("signin").addEventListener("submit", (event) => {
  event.preventDefault();
  session.token = $("token").value.trim();
  $("token").value = "";
  start();
});
$("signout").addEventListener("click", () => signOut());
$("view").addEventListener("focusout", () => {
  if (deferred) { deferred = false; scheduleRedraw(); }
});
window.addEventListener("hashchange", () => { if (session.who) draw(); });

// `berth ui-login` prints a link ending in #token=...: take the token into the session
// and drop it from the address bar and the history at once.
const link = location.hash.match(/^#token=([A-Za-z0-9._~-]+)$/);
if (link) {
  session.token = link[1];
  history.replaceState(null, "", location.pathname + location.search + "#/queue");
}
if (session.token) start();
else showSignIn();
