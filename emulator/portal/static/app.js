// The portal's page: views of the emulator drawn from /portal/api/ (JSON), redrawn every two
// seconds while the emulator answers. Every value is put in as text (textContent), never as markup.
"use strict";

const POLL_MS = 2000;
// The views by route; resource.js, storage.js and batch.js add theirs.
const VIEWS = {};
const KINDS = ["job", "cluster", "experiment", "workspace", "fileServer", "resourceGroup", "storageAccount", "batchAccount"];

// el("td", {class: "mono"}, "text", child...): an element with attributes and children.
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== undefined && value !== null) node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function stateBadge(state) {
  return el("span", {class: "state " + String(state || "").toLowerCase(), "data-state": state || ""}, state || "-");
}

function link(hash, text) {
  return el("a", {href: hash}, text);
}

function resourceHash(id) {
  return "#/resource?id=" + encodeURIComponent(id);
}

// The route in the hash: "#/resources?type=job" -> {path: "/resources", params}.
function currentRoute() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const question = hash.indexOf("?");
  const path = question < 0 ? hash : hash.slice(0, question);
  const params = new URLSearchParams(question < 0 ? "" : hash.slice(question + 1));
  return {path, params};
}

const statusLine = () => document.getElementById("status");

async function getJson(url) {
  const response = await fetch(url, {headers: {Accept: "application/json"}, cache: "no-store"});
  const body = await response.json();
  if (!response.ok) {
    const message = body && body.error ? body.error.code + ": " + body.error.message : "HTTP " + response.status;
    throw Object.assign(new Error(message), {answered: true});
  }
  return body;
}

function table(headings, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, ...headings.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows));
}

// ---- actions: POSTs with this page's token; a button asks again before it acts ----

let token = null;
let armed = null;     // the key of the button waiting for its confirmation (kept across redraws)
let resizeTo = null;  // what is typed in a cluster's resize field (kept across redraws)
let lastAction = "";  // what the last action answered

// A POST that changes something, with this page's token; what it answered is kept for the page
// (lastAction) and the page drawn again.
async function change(label, url, body, contentType) {
  if (!token) token = (await getJson("/portal/api/session")).token;
  const response = await fetch(url, {
    method: "POST", cache: "no-store", body,
    headers: {"Content-Type": contentType || "application/json", "X-Portal-Token": token}});
  // (A refusal before the portal's handler, such as a body over the endpoint's limit, is no JSON.)
  const text = await response.text();
  let answer = {};
  try {
    answer = JSON.parse(text) || {};
  } catch (error) {
    answer = {};
  }
  lastAction = response.ok
    ? `${label}: done` + (answer.status ? ` (${answer.status})` : "")
    : `${label}: ${answer.error ? answer.error.code + ": " + answer.error.message : "HTTP " + response.status}`;
  draw();
  return response.ok;
}

function act(body) {
  return change(body.action, "/portal/api/actions", JSON.stringify(body));
}

// A button that, clicked once, asks "confirm ...?" and acts on the second click: an action's
// body, or a function that does it.
function actionButton(key, label, body) {
  const waiting = armed === key;
  const button = el("button", {type: "button", "data-action": key, class: waiting ? "armed" : ""},
                    waiting ? `Confirm: ${label}` : label);
  button.addEventListener("click", () => {
    if (armed !== key) {
      armed = key;
      button.textContent = `Confirm: ${label}`;
      button.className = "armed";
      return;
    }
    armed = null;
    if (typeof body === "function") body(); else act(body);
  });
  return button;
}

function actionResult() {
  return el("p", {id: "action-result"}, lastAction);
}

// A button that puts `text` on the clipboard (where the browser lets the page: over HTTPS it
// does once the certificate is trusted); otherwise it selects the text for a Ctrl+C.
function copyButton(text, what) {
  const button = el("button", {type: "button", class: "copy", "data-copy": what, title: "copy the " + what}, "copy");
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "copied";
    } catch (error) {
      const range = document.createRange();
      range.selectNodeContents(button.parentNode.firstChild);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = "selected: Ctrl+C";
    }
    button.dataset.done = button.textContent;
  });
  return button;
}

// ---- views: each returns the nodes of the main area for its data ----

async function overviewView() {
  const data = await getJson("/portal/api/overview");
  const endpoints = Object.entries(data.endpoints).map(([name, url]) =>
    el("tr", {}, el("td", {}, name), el("td", {class: "mono"}, url)));
  const accounts = data.accounts.map((a) =>
    el("tr", {"data-account": a.name}, el("td", {}, a.name), el("td", {class: "mono"}, a.key, " ", copyButton(a.key, "key")),
       el("td", {class: "mono"}, a.connectionString, " ", copyButton(a.connectionString, "connection string"))));
  const counts = KINDS.map((kind) =>
    el("tr", {}, el("td", {}, link("#/resources?type=" + kind, kind)),
       el("td", {"data-count": kind}, data.counts[kind] === undefined ? 0 : data.counts[kind])));
  const states = Object.entries(data.jobStates).map(([state, count]) =>
    el("tr", {}, el("td", {}, link("#/resources?type=job&state=" + encodeURIComponent(state), stateBadge(state))),
       el("td", {}, count)));
  return [
    el("h1", {}, "Overview"),
    el("p", {}, "Version ", el("code", {id: "version"}, data.version), ", data directory ",
       el("code", {}, data.dataDirectory)),
    el("h2", {}, "Endpoints"), table(["endpoint", "URL"], endpoints),
    el("h2", {}, "Storage accounts"), table(["name", "key", "connection string"], accounts),
    el("h2", {}, "Resources"), table(["kind", "count"], counts),
    el("h2", {}, "Jobs by state"), states.length ? table(["state", "jobs"], states) : el("p", {}, "No jobs yet."),
  ];
}

function filtersForm(params) {
  const kind = el("select", {name: "type"}, ...KINDS.map((k) => {
    const option = el("option", {value: k}, k);
    if (k === params.get("type")) option.selected = true;
    return option;
  }));
  const state = el("input", {name: "state", value: params.get("state") || "", placeholder: "any", size: 12});
  const search = el("input", {name: "q", value: params.get("q") || "", placeholder: "part of the id", size: 30});
  const form = el("form", {class: "filters"},
    el("label", {}, "kind", kind), el("label", {}, "state", state), el("label", {}, "search", search),
    el("button", {type: "submit"}, "Show"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams({type: kind.value});
    if (state.value) next.set("state", state.value);
    if (search.value) next.set("q", search.value);
    location.hash = "#/resources?" + next.toString();
  });
  return form;
}

async function resourcesView(params, redraw) {
  const query = new URLSearchParams({type: params.get("type") || "job", skip: params.get("skip") || "0", top: "100"});
  for (const name of ["state", "q"]) if (params.get(name)) query.set(name, params.get(name));
  const data = await getJson("/portal/api/resources?" + query.toString());
  const rows = data.items.map((item) =>
    el("tr", {"data-name": item.name}, el("td", {}, link(resourceHash(item.id), item.name)),
       el("td", {}, stateBadge(item.state)), el("td", {}, item.created || ""),
       el("td", {class: "mono"}, item.id)));
  const page = (skip) => {
    const next = new URLSearchParams(params);
    next.set("skip", String(Math.max(0, skip)));
    return "#/resources?" + next.toString();
  };
  const pager = el("div", {class: "pager"},
    data.skip > 0 ? link(page(data.skip - data.top), "previous") : null,
    el("span", {id: "shown"}, `${data.total ? data.skip + 1 : 0}-${data.skip + data.items.length} of ${data.total}`),
    data.skip + data.items.length < data.total ? link(page(data.skip + data.top), "next") : null);
  const results = [table(["name", "state", "created", "id"], rows), pager];
  // A redraw keeps the form (and what is being typed in it); the first draw makes it.
  if (redraw) return {replace: "#results", nodes: results};
  return [el("h1", {}, data.type + "s"), filtersForm(params), el("div", {id: "results"}, ...results)];
}

// "a/b/" -> links to the container's top, "a/" and "a/b/".
function crumbs(top, parts, hashFor) {
  const nodes = [link(hashFor(""), top)];
  let so_far = "";
  for (const part of parts) {
    so_far += part + "/";
    nodes.push(" / ", link(hashFor(so_far), part));
  }
  return el("p", {class: "crumbs"}, ...nodes);
}

function downloadLink(url) {
  return el("a", {href: url, download: "", rel: "noreferrer"}, "download");
}

VIEWS["/"] = overviewView;
VIEWS["/resources"] = resourcesView;

// ---- drawing and the poll ----

let drawn = null;  // the route drawn last ("path?query")
let failures = 0;
let timer = null;
let generation = 0;  // a draw that a newer one overtook (the page moved on) leaves the page alone

async function draw() {
  clearTimeout(timer);
  const mine = ++generation;
  const route = currentRoute();
  const key = route.path + "?" + route.params.toString();
  const view = VIEWS[route.path];
  const main = document.getElementById("view");
  if (!view) {
    main.replaceChildren(el("h1", {}, "Not found"), el("p", {}, "The portal has no page " + route.path + "."));
    return;
  }
  try {
    const redraw = drawn === key;
    const result = await view(route.params, redraw);
    if (mine !== generation) return;
    if (result.replace) {
      const target = main.querySelector(result.replace);
      if (target) target.replaceChildren(...result.nodes.filter((node) => node !== null && node !== undefined));
    } else {
      main.replaceChildren(...result.filter((node) => node !== null && node !== undefined));
    }
    drawn = key;
    failures = 0;
    statusLine().className = "";
    statusLine().textContent = "live, updated " + new Date().toLocaleTimeString();
  } catch (error) {
    if (mine !== generation) return;
    if (error.answered) {
      main.replaceChildren(el("h1", {}, "Cannot show this"), el("p", {class: "error", id: "error"}, error.message));
      drawn = key;
    } else {
      failures += 1;
      statusLine().className = "disconnected";
      statusLine().textContent = "disconnected: the emulator does not answer";
    }
  }
  // While the emulator answers, every two seconds; after it stopped answering, less and less often.
  timer = setTimeout(draw, failures ? Math.min(30000, POLL_MS * 2 ** failures) : POLL_MS);
}

window.addEventListener("hashchange", () => {
  drawn = null;
  draw();
});
// The deferred scripts (this one and the views') have all run by then.
document.addEventListener("DOMContentLoaded", draw);
