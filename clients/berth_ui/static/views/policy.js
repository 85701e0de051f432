// The scheduling policy (operators): the current one and its options, and a form to
// change it. The daemon refuses (409) a change that would break a guarantee unless it
// is forced; the refusal is shown word for word.

import { act, api, outcomeArea, h, session } from "../lib.js";

function parseOptions(text) {
  const options = {};
  for (const item of text.split(/[\s,]+/).filter(Boolean)) {
    const [key, ...rest] = item.split("=");
    const value = rest.join("=");
    options[key] = /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  }
  return options;
}

export async function render(_argument, redraw) {
  if (!session.operator) return h("p", { class: "error" }, "Only operators see the policy.");
  const current = await api("GET", "/v1/admin/policy");
  const result = outcomeArea("policy-result");
  const choice = h("select", { id: "policy-name", "aria-label": "policy" },
    Object.keys(current.known).map((name) => h("option", { value: name,
      selected: name === current.policy }, name)));
  const options = h("input", { id: "policy-options", size: 40, "aria-label": "options",
    placeholder: "option=value ...", value: Object.entries(current.options)
      .map(([k, v]) => `${k}=${v}`).join(" ") });
  const force = h("input", { id: "policy-force", type: "checkbox" });
  const known = h("p", { class: "muted" });
  const explain = () => {
    known.textContent = `Options of ${choice.value}: ${current.known[choice.value]?.join(", ") || "none"}`;
  };
  choice.addEventListener("change", explain);
  explain();
  const form = h("form", { id: "policy-form", class: "filters", onsubmit: (event) => {
    event.preventDefault();
    act(result, `Switch to ${choice.value}`, "PUT", "/v1/admin/policy",
      { policy: choice.value, options: parseOptions(options.value), force: force.checked }, redraw);
  } }, h("label", {}, "Policy ", choice), h("label", {}, "Options ", options),
  h("label", {}, force, " force (break guarantees)"),
  h("button", { class: "action", type: "submit" }, "Change"));
  return h("div", {}, h("h1", {}, "Scheduling policy"),
    h("p", {}, "Now: ", h("strong", { id: "policy-current" }, current.policy), " ",
      h("span", { class: "muted" }, JSON.stringify(current.options))),
    form, known, result);
}
