// memlane dashboard: one page over the REST API. The API key lives in sessionStorage only and
// travels in the Authorization header, never in a URL. Every text from the server is inserted
// with text nodes (h() below), never as HTML.
"use strict";

const KEY = "memlane.key";
const SKIPPED = "memlane.skipped"; // message id -> why the engine stored nothing (from add results)
const MODES = {
  vector: { label: "vector", keyword_search: false, rerank: false },
  hybrid: { label: "hybrid (vector + keyword)", keyword_search: true, rerank: false },
  rerank: { label: "hybrid + rerank", keyword_search: true, rerank: true },
};
const MEMORY_TYPES = ["fact", "preference", "event", "profile", "procedural"];
const SHOWN = { search: 50, memories: 200, messages: 500 }; // rows a page asks for; more means narrowing the filters
const SCOPE_KEYS = ["user_id", "agent_id", "run_id"];
const PICK_SCOPE = "Choose a user, agent or run (the overview lists them).";
const main = document.getElementById("main");
const session = { tenant: null, admin: false };

// -- DOM -------------------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

function render(...nodes) {
  main.replaceChildren(...nodes.flat().filter(Boolean));
}

// A view renders when its requests are answered; by then the reader may have moved on. Each
// navigation bumps the generation, and a view paints only while its own generation is current.
let generation = 0;

function painter() {
  const mine = generation;
  return (...nodes) => { if (mine === generation) render(...nodes); };
}

function table(headers, rows, empty = "Nothing here yet.") {
  if (!rows.length) return h("p", { class: "muted" }, empty);
  return h("table", {}, h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))));
}

function field(label, input) {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

function input(name, value, attrs = {}) {
  return h("input", { name, value: value ?? "", ...attrs });
}

function link(hash, text) {
  return h("a", { href: hash }, text);
}

function memoryLink(id, text) {
  return link(route("memory/" + encodeURIComponent(id)), text);
}

function route(view, params = {}) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "" && v !== false) query.set(k, v);
  const tail = query.toString();
  return "#/" + view + (tail ? "?" + tail : "");
}

function time(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

function num(value, digits = 3) {
  return typeof value === "number" ? value.toFixed(digits) : "";
}

function json(value) {
  return value && Object.keys(value).length ? JSON.stringify(value) : "";
}

function scopeOf(item) { // the user_id / agent_id / run_id an object names
  return Object.fromEntries(SCOPE_KEYS.filter((k) => item[k]).map((k) => [k, item[k]]));
}

function scopeText(item) {
  return SCOPE_KEYS.filter((k) => item[k]).map((k) => `${k.replace("_id", "")}: ${item[k]}`).join(" · ");
}

function notice(text, kind = "info") {
  return h("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

function failure(error) {
  const id = error.requestId ? ` (request id ${error.requestId})` : "";
  return notice(`${error.status ? error.status + ": " : ""}${error.message}${id}`, "error");
}

function confirmDialog(text) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  return new Promise((resolve) => {
    const done = (answer) => () => { dialog.close(); resolve(answer); };
    document.getElementById("confirm-ok").onclick = done(true);
    document.getElementById("confirm-cancel").onclick = done(false);
    dialog.oncancel = done(false);
    dialog.showModal();
  });
}

// -- API -------------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message, requestId) {
    super(message);
    this.status = status;
    this.requestId = requestId;
  }
}

async function api(method, path, { params, body, key } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  const headers = { Authorization: "Bearer " + (key || sessionStorage.getItem(KEY) || "") };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (exc) {
    throw new ApiError(0, `the server did not answer (${exc.message})`);
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const detail = data && typeof data.detail === "string" ? data.detail : response.statusText;
    const error = new ApiError(response.status, detail, response.headers.get("x-request-id"));
    if (response.status === 401 && !key) signOut(detail);
    throw error;
  }
  return data;
}

// -- session ---------------------------------------------------------------------------------------

async function signIn(key) {
  const ping = await api("GET", "/v1/ping/", { key });
  sessionStorage.setItem(KEY, key);
  session.tenant = ping.project_id;
  try {
    await api("GET", "/scopes", { params: { limit: 1 } });
    session.admin = true;
  } catch (exc) {
    if (exc.status !== 403) throw exc;
    session.admin = false;
  }
  document.getElementById("nav").hidden = false;
  document.getElementById("logout").hidden = false;
  document.getElementById("who").textContent = `tenant ${session.tenant}${session.admin ? " · admin key" : ""}`;
}

function signOut(reason) {
  generation += 1;
  sessionStorage.removeItem(KEY);
  session.tenant = null;
  document.getElementById("nav").hidden = true;
  document.getElementById("logout").hidden = true;
  document.getElementById("who").textContent = "";
  showLogin(reason);
}

function showLogin(reason) {
  const key = h("input", { type: "password", name: "key", autocomplete: "off", required: true, placeholder: "API key" });
  const status = h("div");
  const form = h("form", {
    class: "login", onsubmit: async (event) => {
      event.preventDefault();
      try {
        await signIn(key.value.trim());
        if (!location.hash || location.hash === "#/") location.hash = "#/overview";
        else show();
      } catch (exc) {
        status.replaceChildren(failure(exc));
      }
    },
  },
  h("h1", {}, "Sign in"),
  h("p", {}, "Enter an API key of this server (", h("code", {}, "memlane keys create --tenant NAME --admin"),
    "). It is kept in this browser tab only and sent with every request."),
  field("API key", key), h("button", { type: "submit" }, "Sign in"), reason ? notice(reason, "error") : null, status);
  render(form);
  key.focus();
}

// -- views -----------------------------------------------------------------------------------------

// A filter form's fields become the view's address, so a view can be reloaded, linked and gone back to.
function submitTo(view) {
  return (event) => {
    event.preventDefault();
    const data = Object.fromEntries(new FormData(event.target).entries());
    for (const box of event.target.querySelectorAll("input[type=checkbox]")) data[box.name] = box.checked ? "1" : "";
    location.hash = route(view, data);
  };
}

function scopeForm(view, params, extra = []) {
  const fields = SCOPE_KEYS.map((k) => field(k.replace("_id", ""), input(k, params[k], { placeholder: k })));
  return h("form", { class: "bar", onsubmit: submitTo(view) }, fields, extra, h("button", { type: "submit" }, "Show"));
}

function hasScope(params) {
  return SCOPE_KEYS.some((k) => params[k]);
}

async function overview() {
  const paint = painter();
  const parts = [h("h1", {}, `Tenant ${session.tenant}`)];
  if (!session.admin) {
    paint(parts, notice("This key is not an admin key: listing the tenant's users needs one. Open a scope by its id:"),
      scopeForm("memories", {}));
    return;
  }
  const [info, scopes] = await Promise.all([api("GET", "/info"), api("GET", "/scopes")]);
  parts.push(h("dl", { class: "facts" },
    [["memories", info.memories], ["history events", info.history_events], ["embedder", `${info.embedder} (${info.dims} dims)`],
      ["store", info.store]].map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))])));
  const kinds = [["Users", "users", "user_id"], ["Agents", "agents", "agent_id"], ["Runs", "runs", "run_id"]];
  for (const [title, key, column] of kinds) {
    parts.push(h("h2", {}, title), table(["id", "memories", "valid", "messages", ""],
      scopes[key].map((row) => [link(route("memories", { [column]: row.id }), row.id), row.memories, row.valid, row.messages,
        h("span", { class: "links" }, link(route("messages", { [column]: row.id }), "messages"),
          column === "user_id" ? link(route("graph", { user_id: row.id }), "graph") : null)]),
      `No ${key} yet.`));
  }
  paint(parts);
}

function memoryFilters(params) {
  const clauses = [];
  if (params.text) clauses.push({ memory: { icontains: params.text } });
  if (params.memory_type) clauses.push({ memory_type: params.memory_type });
  if (params.filters) {
    try {
      clauses.push(JSON.parse(params.filters));
    } catch (exc) {
      throw new ApiError(0, `the metadata filter is not JSON: ${exc.message}`);
    }
  }
  if (!clauses.length) return undefined;
  return clauses.length === 1 ? clauses[0] : { AND: clauses };
}

async function memories(params) {
  const paint = painter();
  const typeSelect = h("select", { name: "memory_type" }, h("option", { value: "" }, "any type"),
    MEMORY_TYPES.map((t) => h("option", { value: t, selected: params.memory_type === t }, t)));
  const modeSelect = h("select", { name: "mode" }, Object.entries(MODES).map(([value, mode]) =>
    h("option", { value, selected: (params.mode || "vector") === value }, mode.label)));
  const form = scopeForm("memories", params, [
    field("text contains", input("text", params.text)),
    field("type", typeSelect),
    field("metadata filter (JSON)", input("filters", params.filters, { placeholder: '{"category": "food"}' })),
    field("as of", input("as_of", params.as_of, { placeholder: "2026-01-31T12:00:00Z" })),
    field("invalidated too", h("input", { type: "checkbox", name: "include_invalid", checked: !!params.include_invalid })),
    h("span", { class: "break" }),
    field("search", input("q", params.q, { placeholder: "what to look for", class: "wide" })),
    field("ranking", modeSelect),
    field("threshold", input("threshold", params.threshold, { placeholder: "0.2", size: 5 })),
  ]);
  const parts = [h("h1", {}, params.q ? "Search" : "Memories"), form];
  let filters;
  try {
    filters = memoryFilters(params);
  } catch (exc) {
    paint(parts, failure(exc));
    return;
  }
  if (!hasScope(params) && !filters) {
    paint(parts, notice(PICK_SCOPE));
    return;
  }
  try {
    parts.push(...(await memoryResults(params, filters)));
  } catch (exc) {
    if (exc.status === 401) return;
    parts.push(failure(exc));
  }
  paint(parts);
}

async function memoryResults(params, filters) {
  const parts = [];
  const scope = scopeOf(params);
  const common = { include_invalid: !!params.include_invalid, as_of: params.as_of || undefined };
  let items, found, elapsed;
  if (params.q) {
    const mode = MODES[params.mode] || MODES.vector;
    const started = performance.now();
    found = await api("POST", "/search", {
      body: { query: params.q, ...scope, filters, limit: SHOWN.search, ...common, keyword_search: mode.keyword_search, rerank: mode.rerank,
        threshold: params.threshold ? Number(params.threshold) : undefined },
    });
    elapsed = performance.now() - started;
    items = found.results;
    parts.push(stageTable(found.metadata, elapsed));
  } else {
    found = await api("GET", "/memories", { params: { ...scope, ...common, filters: filters && JSON.stringify(filters), limit: SHOWN.memories } });
    items = found.results;
  }
  const limit = params.q ? SHOWN.search : SHOWN.memories;
  parts.push(h("p", { class: "muted" }, `${items.length} memor${items.length === 1 ? "y" : "ies"}${params.as_of ? ` as of ${time(params.as_of)}` : ""}`,
    items.length === limit ? ` — the ${params.q ? "best" : "newest"} ${limit} only; narrow the filters to see the rest` : ""));
  const scored = Boolean(params.q);
  const headers = ["memory", "scope", "type", ...(scored ? ["score", "vector", "keyword", "rerank"] : []), "status", "updated"];
  parts.push(table(headers, items.map((item) => [
    memoryLink(item.id, item.memory), scopeText(item), item.memory_type || "",
    ...(scored ? [num(item.score), num(item.scores?.vector ?? item.score), num(item.scores?.keyword), num(item.scores?.rerank)] : []),
    status(item), time(item.updated_at),
  ]), "No memories match."));
  return parts;
}

function stageTable(metadata, elapsed) {
  const browser = `round trip ${elapsed.toFixed(1)} ms (measured in the browser)`;
  if (!metadata) return h("p", { class: "muted stages" }, `vector search only; ${browser}`);
  const rows = [];
  const walk = (stages, depth) => {
    for (const [name, stage] of Object.entries(stages)) {
      const nested = Object.entries(stage).filter(([, v]) => v && typeof v === "object" && "ran" in v);
      const details = Object.entries(stage).filter(([k, v]) => !["ran", "ms", "error"].includes(k) && !(v && typeof v === "object"))
        .map(([k, v]) => `${k}: ${v}`).join(", ");
      rows.push([(depth ? "↳ " : "") + name, stage.ran ? "ran" : "skipped", num(stage.ms, 1), stage.error || details]);
      walk(Object.fromEntries(nested), depth + 1);
    }
  };
  walk(metadata.stages || {}, 0);
  return h("section", { class: "stages" }, h("h2", {}, "Stages"), table(["stage", "", "ms", "details"], rows),
    h("p", { class: "muted" }, `server total ${num(metadata.total_ms, 1)} ms; ${browser}`,
      metadata.fallback_used ? ` · fallback used: ${metadata.original_error}` : ""));
}

function status(item) {
  if (!item.valid_to) return h("span", { class: "badge ok" }, "valid");
  return h("span", { class: "badge gone", title: item.invalid_reason || "" }, `invalidated ${time(item.valid_to)}`);
}

async function memoryPage(id) {
  const paint = painter();
  const [item, events] = await Promise.all([
    api("GET", `/memories/${encodeURIComponent(id)}`).catch((exc) => { if (exc.status === 404) return null; throw exc; }),
    api("GET", `/memories/${encodeURIComponent(id)}/history`).catch((exc) => { if (exc.status === 404) return []; throw exc; }),
  ]);
  if (!item && !events.length) {
    paint(h("h1", {}, "Memory"), notice(`No memory with id ${id} in this tenant.`, "error"));
    return;
  }
  const scope = item ? scopeOf(item) : scopeOf(events[0]);
  const parts = [h("h1", {}, "Memory"), h("p", {}, link(route("memories", scope), `← memories of ${scopeText(scope)}`))];
  if (item) parts.push(memoryCard(item)); else parts.push(notice("This memory was deleted; its history is kept."));
  parts.push(h("h2", {}, "History"), timeline(events, item, scope));
  if (item) parts.push(asOfForm(item, scope));
  paint(parts);
}

function memoryCard(item) {
  const rows = [["id", item.id], ["scope", scopeText(item)], ["type", item.memory_type], ["role", item.role],
    ["actor", item.actor_id], ["created", time(item.created_at)], ["updated", time(item.updated_at)],
    ["metadata", json(item.metadata)], ["source messages", (item.source_message_ids || []).join(", ")]];
  const card = h("section", { class: "card" }, h("p", { class: "text" }, item.memory), status(item),
    item.valid_to ? h("p", { class: "invalid" }, item.invalid_reason || "invalidated",
      item.superseded_by ? [" — superseded by ", memoryLink(item.superseded_by, item.superseded_by)] : null) : null,
    h("dl", { class: "facts" }, rows.filter(([, v]) => v).map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))])),
    h("div", { class: "actions" },
      h("button", { type: "button", onclick: () => card.replaceWith(editForm(item)) }, "Edit"),
      h("button", {
        type: "button", class: "danger", onclick: async () => {
          if (!(await confirmDialog(`Delete this memory? "${item.memory}" — its history is kept.`))) return;
          try {
            await api("DELETE", `/memories/${encodeURIComponent(item.id)}`);
            show();
          } catch (exc) {
            card.prepend(failure(exc));
          }
        },
      }, "Delete")));
  return card;
}

function editForm(item) {
  const text = h("textarea", { name: "text", rows: 3 }, item.memory);
  const metadata = h("textarea", { name: "metadata", rows: 2 }, JSON.stringify(item.metadata || {}));
  const status = h("div");
  return h("form", {
    class: "card edit", onsubmit: async (event) => {
      event.preventDefault();
      let parsed;
      try {
        parsed = JSON.parse(metadata.value || "{}");
      } catch (exc) {
        status.replaceChildren(notice(`metadata is not JSON: ${exc.message}`, "error"));
        return;
      }
      try {
        await api("PUT", `/memories/${encodeURIComponent(item.id)}`, { body: { text: text.value, metadata: parsed } });
        show();
      } catch (exc) {
        status.replaceChildren(failure(exc));
      }
    },
  }, field("text", text), field("metadata (JSON)", metadata),
  h("div", { class: "actions" }, h("button", { type: "button", onclick: show }, "Cancel"), h("button", { type: "submit" }, "Save")), status);
}

function timeline(events, item, scope) {
  const entries = events.map((event) => {
    const invalidated = event.event === "DELETE" && event.reason;
    const label = invalidated ? "INVALIDATED" : event.event;
    return h("li", { class: `event ${label.toLowerCase()}` },
      h("div", { class: "when" }, time(event.created_at), " ", h("span", { class: "badge" }, label)),
      event.old_memory && event.new_memory ? h("p", {}, h("del", {}, event.old_memory), " → ", h("ins", {}, event.new_memory))
        : h("p", {}, event.new_memory || event.old_memory || ""),
      event.reason ? h("p", { class: "muted" }, event.reason) : null,
      h("p", { class: "muted" }, [event.role && `role ${event.role}`, event.actor_id && `actor ${event.actor_id}`].filter(Boolean).join(" · "),
        " ", link(route("memories", { ...scope, as_of: event.created_at, include_invalid: "" }), "scope as of then")));
  });
  if (item && item.superseded_by) {
    entries.push(h("li", { class: "event superseded" }, h("div", { class: "when" }, time(item.valid_to), " ", h("span", { class: "badge" }, "SUPERSEDED")),
      h("p", {}, "superseded by ", memoryLink(item.superseded_by, item.superseded_by))));
  }
  return entries.length ? h("ol", { class: "timeline" }, entries) : h("p", { class: "muted" }, "No history.");
}

function asOfForm(item, scope) {
  const when = input("as_of", "", { placeholder: "2026-01-31T12:00:00Z" });
  const out = h("div", { class: "asof-result" });
  return h("form", {
    class: "bar asof", onsubmit: async (event) => {
      event.preventDefault();
      try {
        const found = await api("GET", "/memories", { params: { ...scope, as_of: when.value, filters: JSON.stringify({ id: item.id }) } });
        out.replaceChildren(found.results.length
          ? h("p", {}, `As of ${time(when.value)} it read: `, h("q", {}, found.results[0].memory))
          : h("p", {}, `As of ${time(when.value)} this memory was not valid (not yet added, or already invalidated).`));
      } catch (exc) {
        out.replaceChildren(failure(exc));
      }
    },
  }, h("h2", {}, "As of"), field("time", when), h("button", { type: "submit" }, "Show"), out);
}

function skippedReasons() {
  try {
    return JSON.parse(sessionStorage.getItem(SKIPPED) || "{}");
  } catch {
    return {};
  }
}

async function messages(params) {
  const paint = painter();
  const parts = [h("h1", {}, "Messages"), scopeForm("messages", params)];
  if (!hasScope(params)) {
    paint(parts, notice(PICK_SCOPE));
    return;
  }
  const scope = scopeOf(params);
  const [log, formed] = await Promise.all([api("GET", "/messages", { params: { ...scope, limit: SHOWN.messages } }),
    api("GET", "/memories", { params: { ...scope, include_invalid: true, limit: 1000 } })]);
  const memoriesOf = {}; // message id -> the memories whose provenance names it
  for (const item of formed.results) for (const id of item.source_message_ids || []) (memoriesOf[id] ||= []).push(item);
  const reasons = skippedReasons();
  parts.push(h("h2", {}, log.length === SHOWN.messages ? `Log (the latest ${log.length})` : `Log (${log.length})`),
    table(["time", "role", "name", "content", "formed", "skipped"], log.map((m) => [time(m.created_at), m.role, m.name || "", m.content,
      h("span", { class: "links" }, (memoriesOf[m.id] || []).map((item) => memoryLink(item.id, item.memory))),
      reasons[m.id] ? h("span", { class: "skip" }, reasons[m.id]) : ""]), "No messages stored for this scope."),
    h("p", { class: "muted" }, "Formed: the memories whose provenance names the message. Why a message stored nothing is reported by the add that received it; the log shows the reasons of adds made from this tab."),
    addForm(scope));
  paint(parts);
}

function addForm(scope) {
  const text = h("textarea", { name: "messages", rows: 3, placeholder: "one message per line" });
  const role = h("select", { name: "role" }, ["user", "assistant"].map((r) => h("option", { value: r }, r)));
  const infer = h("input", { type: "checkbox", name: "infer", checked: true });
  const out = h("div", { class: "add-result" });
  return h("form", {
    class: "card", onsubmit: async (event) => {
      event.preventDefault();
      const lines = text.value.split("\n").map((l) => l.trim()).filter(Boolean);
      if (!lines.length) return;
      try {
        const result = await api("POST", "/memories", {
          body: { messages: lines.map((content) => ({ role: role.value, content })), ...scope, infer: infer.checked },
        });
        const reasons = skippedReasons();
        for (const skip of result.skipped || []) reasons[skip.message_id] = skip.reason;
        sessionStorage.setItem(SKIPPED, JSON.stringify(reasons));
        await messages(scope);
        main.querySelector(".add-result").replaceChildren(addOutcome(result));
      } catch (exc) {
        out.replaceChildren(failure(exc));
      }
    },
  }, h("h2", {}, "Add messages"), field("messages", text),
  h("div", { class: "bar" }, field("role", role), field("extract facts (infer)", infer), h("button", { type: "submit" }, "Add")), out);
}

function addOutcome(result) {
  return h("div", {},
    result.status !== "ok" ? notice(`formation failed: ${result.reason}; the messages are stored`, "error") : null,
    table(["event", "memory"], (result.results || []).map((r) => [r.event, memoryLink(r.id, r.memory)]),
      "No memory changed."),
    (result.skipped || []).length ? h("ul", { class: "skips" }, result.skipped.map((s) => h("li", {}, `skipped: ${s.reason}`))) : null);
}

async function graph(params) {
  const paint = painter();
  const parts = [h("h1", {}, "Graph"), scopeForm("graph", params,
    [field("ended too", h("input", { type: "checkbox", name: "include_invalid", checked: !!params.include_invalid }))])];
  if (!hasScope(params)) {
    paint(parts, notice(PICK_SCOPE));
    return;
  }
  const scope = scopeOf(params);
  const found = await api("GET", "/memories", { params: { ...scope, include_invalid: !!params.include_invalid, limit: 1000 } });
  if (!("relations" in found)) {
    paint(parts, notice("Graph memory is off on this server (set enable_graph in its config)."));
    return;
  }
  parts.push(table(["source", "relationship", "destination", "since", "until"], found.relations.map((r) => [
    r.source, h("span", { class: "rel" }, r.relationship), r.destination, time(r.valid_from || r.created_at), r.valid_to ? time(r.valid_to) : "",
  ]), "No relations for this scope."));
  paint(parts);
}

async function documents(params) {
  const paint = painter();
  const collections = await api("GET", "/collections");
  const parts = [h("h1", {}, "Documents"), h("h2", {}, "Collections"),
    table(["name", "documents", "metadata", "updated"], collections.map((c) => [
      link(route("documents", { collection: c.name }), c.name), c.num_documents, json(c.metadata), time(c.updated_at)]),
    "No collections yet.")];
  if (params.collection) {
    const docs = await api("GET", "/documents", { params: { collection_name: params.collection } });
    parts.push(h("h2", {}, `Documents of ${params.collection}`), table(["name", "pages", "metadata", "updated"],
      docs.map((d) => [d.name, d.num_pages, json(d.metadata), time(d.updated_at)]), "No documents in this collection."));
  }
  const select = h("select", { name: "collection" }, h("option", { value: "" }, "all collections"),
    collections.map((c) => h("option", { value: c.name, selected: params.collection === c.name }, c.name)));
  parts.push(h("form", { class: "bar", onsubmit: submitTo("documents") }, h("h2", {}, "Search pages"), field("query", input("dq", params.dq, { class: "wide", placeholder: "what to look for" })),
  field("in", select), h("button", { type: "submit" }, "Search")));
  if (params.dq) {
    const found = await api("POST", "/search/documents", { body: { query: params.dq, collection_name: params.collection || "all", top_k: 10 } });
    parts.push(table(["document", "collection", "page", "raw score", "normalized", "text"], found.results.map((r) => [
      r.document_name, r.collection_name, r.page_number, num(r.raw_score), num(r.normalized_score),
      h("span", { class: "excerpt" }, (r.text || "").slice(0, 300))]), "No page matches."));
  }
  paint(parts);
}

// -- routing ---------------------------------------------------------------------------------------

const VIEWS = { overview, memories, messages, graph, documents };

async function show() {
  if (!sessionStorage.getItem(KEY)) {
    showLogin();
    return;
  }
  const [path, query] = (location.hash.slice(2) || "overview").split("?");
  const params = Object.fromEntries(new URLSearchParams(query || "").entries());
  const [view, ...rest] = path.split("/");
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("current", a.dataset.view === view || (view === "memory" && a.dataset.view === "memories"));
  generation += 1;
  render(h("p", { class: "muted" }, "Loading…"));
  const paint = painter();
  try {
    if (view === "memory") await memoryPage(decodeURIComponent(rest.join("/")));
    else await (VIEWS[view] || overview)(params);
  } catch (exc) {
    if (exc.status !== 401) paint(h("h1", {}, view), failure(exc)); // 401: the sign-in form is shown
  }
}

async function start() {
  document.getElementById("logout").addEventListener("click", () => signOut());
  window.addEventListener("hashchange", show);
  const key = sessionStorage.getItem(KEY);
  if (!key) {
    showLogin();
    return;
  }
  try {
    await signIn(key);
  } catch (exc) {
    signOut(exc.message);
    return;
  }
  show();
}

start();
