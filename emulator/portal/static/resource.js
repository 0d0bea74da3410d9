// The portal's pages of one resource: a cluster (its nodes, their timeline, its actions), a job
// (its states over time, its output directories as a browser, a file followed as it grows), or
// any other resource's document. Uses app.js's helpers.
"use strict";

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
       el("td", {"data-host": node.host ? node.host.name : ""},
          node.host ? node.host.name + " (allocation " + node.host.allocation + ")" : "this machine"),
       el("td", {}, node.lowPriority ? "low priority" : "dedicated"),
       el("td", {class: "mono"}, (node.gpus || []).join(", ") || "-"),
       el("td", {}, node.job ? link(resourceHash(node.job), node.job.split("/").pop()) : "-"),
       el("td", {}, node.lowPriority ? actionButton("preempt:" + node.nodeId, "pre-empt", {action: "preempt", node: node.nodeId}) : null,
          node.state !== "unusable" ? actionButton("fail:" + node.nodeId, "fail", {action: "fail-node", node: node.nodeId}) : null)));
  return table(["node", "state", "address", "host", "priority", "GPUs", "job", ""], rows);
}

// ---- the nodes' timeline: a Gantt chart of the jobs each node ran, drawn from the engine's history ----

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

// Each node's life (joins -> leaves), the jobs it ran (runs -> ends, still open while running) and
// its faults (pre-empted, failed, unusable), from the history's events (oldest first).
function timelineRows(history, now) {
  const rows = new Map();
  const row = (node) => {
    if (!rows.has(node)) rows.set(node, {node, from: null, to: null, jobs: [], marks: []});
    return rows.get(node);
  };
  for (const event of history) {
    const t = Date.parse(event.time);
    const r = row(event.node);
    if (r.from === null) r.from = t;
    if (event.event === "leaves") r.to = t;
    if (event.event === "runs") r.jobs.push({id: event.jobId, from: t, to: null, end: "running"});
    if (event.event === "ends") {
      const open = r.jobs.filter((j) => j.id === event.jobId && j.to === null).pop();
      if (open) Object.assign(open, {to: t, end: event.detail || "ended"});
    }
    if (["preempted", "fails", "unusable"].includes(event.event)) r.marks.push({t, what: event.event});
  }
  for (const r of rows.values()) {
    if (r.to === null) r.to = now;
    for (const j of r.jobs) if (j.to === null) j.to = now;
  }
  return [...rows.values()];
}

function jobFill(end) {
  if (end === "running") return "#60a5fa";
  if (end.startsWith("succeeded")) return "#4ade80";
  if (end.startsWith("failed")) return "#f87171";
  if (end.startsWith("requeued")) return "#fbbf24";
  return "#9ca3af";
}

function gantt(history) {
  if (!history.length) return el("p", {id: "timeline-empty"}, "Nothing yet: the timeline shows what the nodes do from now on.");
  const now = Math.max(Date.now(), ...history.map((e) => Date.parse(e.time)));
  const rows = timelineRows(history, now);
  const start = Math.min(...rows.map((r) => r.from));
  const span = Math.max(1000, now - start);
  // The names' column as wide as the longest (monospace, about 7.3 px a character at 12 px).
  const label = 12 + Math.ceil(7.3 * Math.max(...rows.map((r) => r.node.length))), width = 760, height = 22;
  const x = (t) => label + ((t - start) / span) * width;
  const chart = svg("svg", {id: "timeline", width: label + width + 10, height: rows.length * height + 24,
                            viewBox: `0 0 ${label + width + 10} ${rows.length * height + 24}`, role: "img"});
  rows.forEach((r, i) => {
    const y = i * height;
    chart.append(svg("text", {x: 0, y: y + 15, class: "label"}, r.node));
    chart.append(svg("rect", {x: x(r.from), y: y + 9, width: Math.max(1, x(r.to) - x(r.from)), height: 4, fill: "#d1d5db"},
                     svg("title", {}, `${r.node}: ${new Date(r.from).toLocaleTimeString()} - ${new Date(r.to).toLocaleTimeString()}`)));
    for (const j of r.jobs) {
      const bar = svg("rect", {x: x(j.from), y: y + 3, width: Math.max(2, x(j.to) - x(j.from)), height: 16, rx: 2,
                               fill: jobFill(j.end), "data-job": j.id, "data-end": j.end, class: "job"},
                      svg("title", {}, `${j.id.split("/").pop()}: ${j.end}`));
      bar.addEventListener("click", () => { location.hash = resourceHash(j.id); });
      chart.append(bar);
    }
    for (const m of r.marks) {
      chart.append(svg("path", {d: `M ${x(m.t)} ${y + 2} l 5 -0 l -2.5 6 z`, fill: "#b91c1c", "data-mark": m.what},
                       svg("title", {}, `${r.node} ${m.what} at ${new Date(m.t).toLocaleTimeString()}`)));
    }
  });
  const axis = rows.length * height + 16;
  chart.append(svg("text", {x: label, y: axis, class: "axis"}, new Date(start).toLocaleTimeString()));
  chart.append(svg("text", {x: label + width, y: axis, class: "axis", "text-anchor": "end"}, new Date(now).toLocaleTimeString()));
  return chart;
}

function timelineLegend() {
  const swatch = (color, text) => {
    const box = el("span", {class: "swatch"});
    box.style.background = color;
    return el("span", {class: "legend-item"}, box, text);
  };
  return el("p", {class: "legend"}, swatch(jobFill("running"), "running"), swatch(jobFill("succeeded"), "succeeded"),
            swatch(jobFill("failed"), "failed"), swatch(jobFill("requeued"), "requeued"), swatch(jobFill("stopped"), "stopped"),
            swatch("#d1d5db", "the node's life"), swatch("#b91c1c", "pre-empted, failed or unusable (a mark)"),
            " A bar opens its job.");
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

// What a resource holds, by kind: the first 20 of each, and a link to the list of all of them.
function childrenSection(key, children) {
  const kinds = Object.keys(children);
  if (!kinds.length) return [];
  return [el("h2", {}, "Contains"), ...kinds.map((kind) => el("div", {"data-children": kind},
    el("h3", {}, kind + "s"),
    table(["name", "state", "created"], children[kind].items.map((item) =>
      el("tr", {"data-name": item.name}, el("td", {}, link(resourceHash(item.id), item.name)), el("td", {}, stateBadge(item.state)),
         el("td", {}, item.created || "")))),
    children[kind].more ? link("#/resources?" + new URLSearchParams({type: kind, q: key + "/"}).toString(), `all ${kind}s`) : null))];
}

// #/tree: resource groups, each opened (a click) into what it holds, and so on down.
async function treeBranch(id) {
  const data = await getJson("/portal/api/resource?id=" + encodeURIComponent(id));
  const branches = [];
  for (const [kind, page] of Object.entries(data.children || {})) {
    for (const item of page.items) branches.push(treeNode(item, kind));
    if (page.more) {
      branches.push(el("li", {}, link("#/resources?" + new URLSearchParams({type: kind, q: id.toLowerCase() + "/"}).toString(),
                                      `all ${kind}s...`)));
    }
  }
  return branches.length ? el("ul", {}, ...branches) : el("p", {class: "muted"}, "(nothing under it)");
}

function treeNode(item, kind) {
  const summary = el("summary", {}, `${kind} `, link(resourceHash(item.id), item.name), " ", stateBadge(item.state));
  const details = el("details", {"data-tree": item.id}, summary);
  details.addEventListener("toggle", async () => {
    if (!details.open || details.dataset.loaded) return;
    details.dataset.loaded = "1";
    try {
      details.append(await treeBranch(item.id));
    } catch (error) {
      details.append(el("p", {class: "error"}, error.message));
    }
  });
  return el("li", {}, details);
}

async function treeView(params, redraw) {
  if (redraw) return {replace: "#no-redraw", nodes: []};  // opened branches stay as they are
  const groups = await getJson("/portal/api/resources?type=resourceGroup&top=1000");
  return [el("h1", {}, "Resources"),
          el("p", {}, "Open a resource group, a workspace, an experiment: what each holds is read when it is opened."),
          el("ul", {id: "tree"}, ...groups.items.map((g) => treeNode(g, "resourceGroup")))];
}

// A job's times, exit code and errors (from its document), and its states over time (the engine's history).
function jobSummary(properties, history) {
  const info = properties.executionInfo || {};
  const rows = [["created", properties.creationTime], ["started", info.startTime], ["ended", info.endTime],
                ["exit code", info.exitCode], ["state since", properties.executionStateTransitionTime],
                ["priority", properties.schedulingPriority], ["nodes", properties.nodeCount]]
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([name, value]) => el("tr", {"data-field": name}, el("th", {}, name), el("td", {}, value)));
  const errors = (info.errors || []).map((e) =>
    el("li", {class: "error"}, `${e.code}: ${e.message}`,
       ...(e.details || []).map((d) => el("div", {class: "detail"}, `${d.name}: ${d.value}`))));
  const events = history.map((e) =>
    el("tr", {"data-event": e.event}, el("td", {}, e.time), el("td", {}, e.event), el("td", {}, e.detail || "")));
  return [table(["", ""], rows), errors.length ? el("ul", {id: "job-errors"}, ...errors) : null,
          el("h2", {}, "History"),
          events.length ? table(["time", "event", ""], events)
                        : el("p", {}, "No events since the emulator started (the times above are the document's).")];
}

// The job's output directories: stdouterr and the ids of its outputDirectories.
function outputDirectories(id, properties) {
  const ids = ["stdouterr", ...(properties.outputDirectories || []).map((d) => d.id)];
  return el("p", {id: "output-directories"}, "Browse: ",
            ...ids.flatMap((dir, i) => [i ? ", " : "", link(filesHash(id, dir, ""), dir)]));
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
  const jobId = document_.id || id;
  const output = data.type === "job" ? [el("h2", {}, "Output (stdouterr)"), outputDirectories(jobId, properties),
                                        await outputList(jobId, "stdouterr", "")] : [];
  const summary = data.type === "job" ? jobSummary(properties, data.history || []) : [];
  const timeline = data.type === "cluster" ? [el("h2", {}, "Timeline"), gantt(data.history || []), timelineLegend()] : [];
  const target = (properties.scaleSettings && properties.scaleSettings.manual) ? properties.scaleSettings.manual.targetNodeCount
                                                                                  : properties.currentNodeCount || 0;
  const actions = data.type === "job" ? [jobActions(document_.id || id), actionResult()]
                : data.type === "cluster" ? [resizeForm(document_.id || id, target), actionResult()] : [];
  return [
    el("h1", {}, document_.name || id),
    el("p", {}, data.type, " ", stateBadge(data.state), parent ? " in " : null, parent ? link(resourceHash(parent), parent) : null),
    ...actions,
    ...summary,
    ...childrenSection((document_.id || id).toLowerCase(), data.children || {}),
    ...nodes,
    ...timeline,
    ...output,
    el("h2", {}, "Document"),
    el("pre", {id: "document"}, JSON.stringify(document_, null, 2)),
  ];
}

function outputHash(job, dir, path) {
  return "#/output?" + new URLSearchParams({id: job, dir, path}).toString();
}

function filesHash(job, dir, path) {
  return "#/files?" + new URLSearchParams({id: job, dir, path}).toString();
}

// A directory of a job's output: its subdirectories (opened in the browser), its files (each a
// link to the page that follows it, and a download link).
async function outputList(job, dir, path) {
  let data;
  try {
    data = await getJson("/portal/api/job-files?" + new URLSearchParams({id: job, dir, path: path || "."}).toString());
  } catch (error) {
    if (!error.answered) throw error;
    return el("p", {class: "error"}, error.message);
  }
  const under = (name) => (path ? path + "/" : "") + name;
  const rows = data.items.map((item) => item.directory
    ? el("tr", {"data-file": under(item.name)}, el("td", {}, link(filesHash(job, dir, under(item.name)), item.name + "/")),
         el("td", {}, "directory"), el("td", {}))
    : el("tr", {"data-file": under(item.name)}, el("td", {}, link(outputHash(job, dir, under(item.name)), item.name)),
         el("td", {}, `${item.size} bytes`), el("td", {}, item.downloadUrl ? downloadLink(item.downloadUrl) : null)));
  return rows.length ? table(["file", "size", ""], rows) : el("p", {}, "No files yet.");
}

// #/files?id=JOB&dir=ID&path=SUB: a job's output directory as a browser.
async function filesView(params) {
  const job = params.get("id") || "";
  const dir = params.get("dir") || "stdouterr";
  const path = params.get("path") || "";
  return [el("h1", {}, `${dir} of ${job.split("/").pop()}`),
          el("p", {}, "of job ", link(resourceHash(job), job.split("/").pop())),
          crumbs(dir, path.split("/").filter((p) => p), (p) => filesHash(job, dir, p.replace(/\/$/, ""))),
          el("div", {id: "output-files"}, await outputList(job, dir, path))];
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

VIEWS["/resource"] = resourceView;
VIEWS["/files"] = filesView;
VIEWS["/output"] = outputView;
VIEWS["/tree"] = treeView;
