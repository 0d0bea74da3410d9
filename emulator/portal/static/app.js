// The portal's page: views of the emulator drawn from /portal/api/ (JSON), redrawn every two
// seconds while the emulator answers. Every value is put in as text (textContent), never as markup.
"use strict";

const POLL_MS = 2000;
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

async function act(body) {
  if (!token) token = (await getJson("/portal/api/session")).token;
  const response = await fetch("/portal/api/actions", {
    method: "POST", cache: "no-store", body: JSON.stringify(body),
    headers: {"Content-Type": "application/json", "X-Portal-Token": token}});
  const answer = await response.json();
  lastAction = response.ok
    ? `${body.action}: done (${answer.status})`
    : `${body.action}: ${answer.error ? answer.error.code + ": " + answer.error.message : "HTTP " + response.status}`;
  draw();
}

// A button that, clicked once, asks "confirm ...?" and acts on the second click.
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
    act(body);
  });
  return button;
}

function actionResult() {
  return el("p", {id: "action-result"}, lastAction);
}

// ---- views: each returns the nodes of the main area for its data ----

async function overviewView() {
  const data = await getJson("/portal/api/overview");
  const endpoints = Object.entries(data.endpoints).map(([name, url]) =>
    el("tr", {}, el("td", {}, name), el("td", {class: "mono"}, url)));
  const accounts = data.accounts.map((a) =>
    el("tr", {"data-account": a.name}, el("td", {}, a.name), el("td", {class: "mono"}, a.key),
       el("td", {class: "mono"}, a.connectionString)));
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

function parentOf(id) {
  const parts = id.split("/");
  return parts.length > 5 ? parts.slice(0, -2).join("/") : null;
}

const NODE_STATES = ["idle", "running", "preparing", "unusable", "leaving"];

// A cluster's nodes by state, as a bar of proportional parts (and their counts as text).
function nodeStateBar(counts) {
  const total = NODE_STATES.reduce((sum, state) => sum + (counts[state + "NodeCount"] || 0), 0);
  const parts = NODE_STATES.filter((state) => counts[state + "NodeCount"] > 0).map((state) => {
    const part = el("span", {class: "part " + state, "data-node-state": state, title: state},
                    `${state} ${counts[state + "NodeCount"]}`);
    part.style.flexGrow = String(counts[state + "NodeCount"]);
    return part;
  });
  return el("div", {class: "bar", id: "node-states"}, ...(total ? parts : [el("span", {class: "part"}, "no nodes")]));
}

function nodesTable(nodes) {
  const rows = nodes.map((node) =>
    el("tr", {"data-node": node.nodeId},
       el("td", {class: "mono"}, node.nodeId), el("td", {}, stateBadge(node.state)), el("td", {}, node.ipAddress),
       el("td", {}, node.lowPriority ? "low priority" : "dedicated"),
       el("td", {class: "mono"}, (node.gpus || []).join(", ") || "-"),
       el("td", {}, node.job ? link(resourceHash(node.job), node.job.split("/").pop()) : "-"),
       el("td", {}, node.lowPriority ? actionButton("preempt:" + node.nodeId, "pre-empt", {action: "preempt", node: node.nodeId}) : null)));
  return table(["node", "state", "address", "priority", "GPUs", "job", ""], rows);
}

function resizeForm(id, current) {
  if (resizeTo === null || resizeTo.id !== id) resizeTo = {id, value: String(current)};
  const field = el("input", {type: "number", min: "0", max: "1000", name: "nodes", value: resizeTo.value, size: 5});
  field.addEventListener("input", () => { resizeTo.value = field.value; });
  const button = el("button", {type: "button", "data-action": "resize"}, "Resize");
  button.addEventListener("click", () => act({action: "resize", id, nodes: Number(resizeTo.value)}));
  return el("p", {class: "actions"}, "Nodes wanted ", field, " ", button, " ",
            actionButton("delete-cluster:" + id, "delete the cluster", {action: "delete-cluster", id}));
}

function jobActions(id) {
  return el("p", {class: "actions"}, actionButton("terminate:" + id, "terminate", {action: "terminate", id}), " ",
            actionButton("delete-job:" + id, "delete the job", {action: "delete-job", id}));
}

async function resourceView(params) {
  const id = params.get("id") || "";
  const data = await getJson("/portal/api/resource?id=" + encodeURIComponent(id));
  const document_ = data.document;
  const parent = parentOf(document_.id || id);
  const properties = document_.properties || {};
  const nodes = data.nodes ? [
    el("h2", {}, data.type === "cluster" ? "Nodes" : "Nodes it runs on"),
    data.type === "cluster" && properties.nodeStateCounts ? nodeStateBar(properties.nodeStateCounts) : null,
    data.nodes.length ? nodesTable(data.nodes) : el("p", {}, "None."),
  ] : [];
  const output = data.type === "job" ? [el("h2", {}, "Output (stdouterr)"), await outputList(id, "stdouterr")] : [];
  const target = (properties.scaleSettings && properties.scaleSettings.manual) ? properties.scaleSettings.manual.targetNodeCount
                                                                                  : properties.currentNodeCount || 0;
  const actions = data.type === "job" ? [jobActions(document_.id || id), actionResult()]
                : data.type === "cluster" ? [resizeForm(document_.id || id, target), actionResult()] : [];
  return [
    el("h1", {}, document_.name || id),
    el("p", {}, data.type, " ", stateBadge(data.state), parent ? " in " : null, parent ? link(resourceHash(parent), parent) : null),
    ...actions,
    ...nodes,
    ...output,
    el("h2", {}, "Document"),
    el("pre", {id: "document"}, JSON.stringify(document_, null, 2)),
  ];
}

function outputHash(job, dir, path) {
  return "#/output?" + new URLSearchParams({id: job, dir, path}).toString();
}

// The files of a job's output directory, each a link to the page that follows it.
async function outputList(job, dir) {
  let data;
  try {
    data = await getJson("/portal/api/job-files?" + new URLSearchParams({id: job, dir}).toString());
  } catch (error) {
    if (!error.answered) throw error;
    return el("p", {class: "error"}, error.message);
  }
  const rows = data.items.filter((item) => !item.directory).map((item) =>
    el("tr", {"data-file": item.name}, el("td", {}, link(outputHash(job, dir, item.name), item.name)),
       el("td", {}, `${item.size} bytes`)));
  return rows.length ? table(["file", "size"], rows) : el("p", {}, "No files yet.");
}

// A file of a job's output, followed as it grows: each draw asks for what came after the last.
let followed = {key: null, text: "", from: 0};

async function outputView(params, redraw) {
  const job = params.get("id") || "";
  const dir = params.get("dir") || "stdouterr";
  const path = params.get("path") || "";
  const key = [job, dir, path].join("\n");
  if (followed.key !== key) followed = {key, text: "", from: 0};
  let size = followed.from;
  for (let reads = 0; reads < 16; reads += 1) {  // up to 1 MiB a draw
    const query = new URLSearchParams({id: job, dir, path, from: String(followed.from)});
    let data;
    try {
      data = await getJson("/portal/api/job-file?" + query.toString());
    } catch (error) {
      if (!error.answered || followed.from > 0) throw error;
      data = {size: 0, from: 0, text: "", missing: error.message};
    }
    if (data.size < followed.from) {  // the file was replaced by a shorter one: read it again
      followed = {key, text: "", from: 0};
      continue;
    }
    followed.text += data.text;
    if (!data.missing) followed.from = data.next;
    size = data.size;
    if (data.missing || !data.text.length || followed.from >= data.size) {
      followed.missing = data.missing;
      break;
    }
  }
  const log = el("pre", {id: "log"}, followed.text);
  const note = el("p", {id: "log-size"}, followed.missing ? followed.missing : `${size} bytes`);
  if (redraw) return {replace: "#followed", nodes: [note, log]};
  return [el("h1", {}, path), el("p", {}, "of job ", link(resourceHash(job), job.split("/").pop()), ` (${dir})`),
          el("div", {id: "followed"}, note, log)];
}

// ---- storage: accounts' containers and shares, a container's blobs, a share's directories ----

function storageHash(kind, params) {
  return `#/storage/${kind}?` + new URLSearchParams(params).toString();
}

async function storageView() {
  const overview = await getJson("/portal/api/overview");
  const sections = [el("h1", {}, "Storage")];
  for (const account of overview.accounts) {
    const data = await getJson("/portal/api/storage/volumes?" + new URLSearchParams({account: account.name}).toString());
    const containers = data.containers.map((c) =>
      el("tr", {"data-container": c.name}, el("td", {}, link(storageHash("blobs", {account: account.name, container: c.name}), c.name)),
         el("td", {}, c.publicAccess || "private"), el("td", {}, c.lastModified)));
    const shares = data.shares.map((sh) =>
      el("tr", {"data-share": sh.name}, el("td", {}, link(storageHash("files", {account: account.name, share: sh.name}), sh.name)),
         el("td", {}, `${sh.quotaGiB} GiB`), el("td", {}, sh.lastModified)));
    sections.push(el("h2", {}, account.name),
      containers.length ? table(["blob container", "public access", "last modified"], containers) : el("p", {}, "No blob containers."),
      shares.length ? table(["file share", "quota", "last modified"], shares) : el("p", {}, "No file shares."));
  }
  return sections;
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

async function blobsView(params) {
  const account = params.get("account") || "";
  const container = params.get("container") || "";
  const prefix = params.get("prefix") || "";
  const query = {account, container, prefix};
  if (params.get("marker")) query.marker = params.get("marker");
  const data = await getJson("/portal/api/storage/blobs?" + new URLSearchParams(query).toString());
  const here = (p) => storageHash("blobs", {account, container, prefix: p});
  const rows = data.items.map((item) => item.directory
    ? el("tr", {"data-blob": item.name}, el("td", {}, link(here(item.name), item.name.slice(prefix.length))), el("td", {}, "folder"),
         el("td", {}), el("td", {}), el("td", {}))
    : el("tr", {"data-blob": item.name}, el("td", {}, item.name.slice(prefix.length)), el("td", {}, `${item.size} bytes`),
         el("td", {}, item.contentType || ""), el("td", {}, item.lastModified), el("td", {}, downloadLink(item.downloadUrl))));
  const more = data.nextMarker
    ? link(storageHash("blobs", {account, container, prefix, marker: data.nextMarker}), "next page") : null;
  return [el("h1", {}, `${account} / ${container}`),
          crumbs(container, prefix.split("/").filter((p) => p), (p) => here(p)),
          rows.length ? table(["name", "size", "content type", "last modified", ""], rows) : el("p", {}, "Empty."), more];
}

async function filesView(params) {
  const account = params.get("account") || "";
  const share = params.get("share") || "";
  const path = params.get("path") || "";
  const query = {account, share, path};
  if (params.get("marker")) query.marker = params.get("marker");
  const data = await getJson("/portal/api/storage/files?" + new URLSearchParams(query).toString());
  const here = (p) => storageHash("files", {account, share, path: p.replace(/\/$/, "")});
  const rows = data.items.map((item) => item.directory
    ? el("tr", {"data-file": item.path}, el("td", {}, link(here(item.path), item.name + "/")), el("td", {}, "directory"), el("td", {}))
    : el("tr", {"data-file": item.path}, el("td", {}, item.name), el("td", {}, `${item.size} bytes`),
         el("td", {}, downloadLink(item.downloadUrl))));
  const more = data.nextMarker
    ? link(storageHash("files", {account, share, path, marker: data.nextMarker}), "next page") : null;
  return [el("h1", {}, `${account} / ${share}`),
          crumbs(share, path.split("/").filter((p) => p), (p) => here(p)),
          rows.length ? table(["name", "size", ""], rows) : el("p", {}, "Empty."), more];
}

const VIEWS = {"/": overviewView, "/resources": resourcesView, "/resource": resourceView, "/output": outputView,
               "/storage": storageView, "/storage/blobs": blobsView, "/storage/files": filesView};

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
      if (target) target.replaceChildren(...result.nodes);
    } else {
      main.replaceChildren(...result);
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
draw();
