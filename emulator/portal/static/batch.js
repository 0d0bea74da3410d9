// The portal's Azure Batch pages, read from the Batch API (through /portal/api/batch/read): each
// account's pools and jobs, a pool's nodes with their start task, a job's tasks with their retries
// and requeues, a task's stdout and stderr. Uses app.js's helpers.
"use strict";

function batchHash(kind, params) {
  return `#/batch/${kind}?` + new URLSearchParams(params).toString();
}

async function batchRead(account, path) {
  return getJson("/portal/api/batch/read?" + new URLSearchParams({account, path}).toString());
}

// A list of the Batch API (value, continued by odata.nextLink: the first page is shown).
async function batchList(account, path) {
  return (await batchRead(account, path)).answer.value || [];
}

function nodeCounts(pool) {
  return `${pool.currentDedicatedNodes || 0} dedicated, ${pool.currentLowPriorityNodes || 0} low priority` +
         ` (wanted ${pool.targetDedicatedNodes || 0} + ${pool.targetLowPriorityNodes || 0})`;
}

async function batchView() {
  const {accounts} = await getJson("/portal/api/batch/accounts");
  const sections = [el("h1", {}, "Azure Batch")];
  for (const account of accounts) {
    const pools = (await batchList(account, "/pools")).map((p) =>
      el("tr", {"data-pool": p.id}, el("td", {}, link(batchHash("pool", {account, pool: p.id}), p.id)),
         el("td", {}, stateBadge(p.state)), el("td", {}, stateBadge(p.allocationState)), el("td", {}, p.vmSize),
         el("td", {}, nodeCounts(p))));
    const jobs = (await batchList(account, "/jobs")).map((j) =>
      el("tr", {"data-batch-job": j.id}, el("td", {}, link(batchHash("job", {account, job: j.id}), j.id)),
         el("td", {}, stateBadge(j.state)), el("td", {}, (j.poolInfo && j.poolInfo.poolId) || "auto pool"),
         el("td", {}, j.creationTime)));
    sections.push(el("h2", {}, account),
      pools.length ? table(["pool", "state", "allocation", "VM size", "nodes"], pools) : el("p", {}, "No pools."),
      jobs.length ? table(["job", "state", "pool", "created"], jobs) : el("p", {}, "No jobs."));
  }
  return sections;
}

function fileLink(account, path, name) {
  return link(batchHash("file", {account, path}), name);
}

async function poolView(params) {
  const account = params.get("account") || "";
  const pool = params.get("pool") || "";
  const p = (await batchRead(account, `/pools/${pool}`)).answer;
  const nodes = (await batchList(account, `/pools/${pool}/nodes`)).map((n) => {
    const start = n.startTaskInfo || {};
    const files = `/pools/${pool}/nodes/${n.id}/files/startup/`;
    return el("tr", {"data-node": n.id}, el("td", {class: "mono"}, n.id), el("td", {}, stateBadge(n.state)),
      el("td", {}, n.schedulingState || ""), el("td", {}, n.ipAddress || ""), el("td", {}, n.isDedicated ? "dedicated" : "low priority"),
      el("td", {"data-start-task": start.state || ""}, start.state ? stateBadge(start.state) : "-",
         start.exitCode !== undefined ? ` exit code ${start.exitCode}` : "", start.retryCount ? `, ${start.retryCount} retries` : ""),
      el("td", {}, p.startTask ? [fileLink(account, files + "stdout.txt", "stdout"), " ", fileLink(account, files + "stderr.txt", "stderr")]
                                   .reduce((a, b) => (a.append(b), a), el("span", {})) : "-"),
      el("td", {}, String(n.runningTasksCount || 0)));
  });
  return [el("h1", {}, `pool ${pool}`),
          el("p", {}, "of ", link("#/batch", account), " ", stateBadge(p.state), " ", stateBadge(p.allocationState), " ",
             p.vmSize, ", ", nodeCounts(p)),
          el("h2", {}, "Nodes"),
          nodes.length ? table(["node", "state", "scheduling", "address", "priority", "start task", "start task output", "tasks"], nodes)
                       : el("p", {}, "No nodes."),
          el("h2", {}, "Document"), el("pre", {id: "document"}, JSON.stringify(p, null, 2))];
}

async function batchJobView(params) {
  const account = params.get("account") || "";
  const job = params.get("job") || "";
  const j = (await batchRead(account, `/jobs/${job}`)).answer;
  const tasks = (await batchList(account, `/jobs/${job}/tasks`)).map((t) => {
    const run = t.executionInfo || {};
    const files = `/jobs/${job}/tasks/${t.id}/files/`;
    return el("tr", {"data-task": t.id}, el("td", {}, link(batchHash("task", {account, job, task: t.id}), t.id)),
      el("td", {}, stateBadge(t.state)), el("td", {"data-exit-code": run.exitCode === undefined ? "" : run.exitCode},
                                          run.exitCode === undefined ? "-" : String(run.exitCode)),
      el("td", {"data-retries": run.retryCount || 0}, String(run.retryCount || 0)),
      el("td", {"data-requeues": run.requeueCount || 0}, String(run.requeueCount || 0)),
      el("td", {class: "mono"}, (t.nodeInfo && t.nodeInfo.nodeId) || "-"),
      el("td", {}, fileLink(account, files + "stdout.txt", "stdout"), " ", fileLink(account, files + "stderr.txt", "stderr")));
  });
  return [el("h1", {}, `job ${job}`),
          el("p", {}, "of ", link("#/batch", account), " ", stateBadge(j.state), " on pool ",
             j.poolInfo && j.poolInfo.poolId ? link(batchHash("pool", {account, pool: j.poolInfo.poolId}), j.poolInfo.poolId) : "auto"),
          el("h2", {}, "Tasks"),
          tasks.length ? table(["task", "state", "exit code", "retries", "requeues", "node", "output"], tasks) : el("p", {}, "No tasks."),
          el("h2", {}, "Document"), el("pre", {id: "document"}, JSON.stringify(j, null, 2))];
}

async function taskView(params) {
  const account = params.get("account") || "";
  const job = params.get("job") || "";
  const task = params.get("task") || "";
  const t = (await batchRead(account, `/jobs/${job}/tasks/${task}`)).answer;
  const output = [];
  for (const name of ["stdout.txt", "stderr.txt"]) {
    let text;
    try {
      text = (await batchRead(account, `/jobs/${job}/tasks/${task}/files/${name}`)).text;
    } catch (error) {
      if (!error.answered) throw error;
      text = null;
    }
    output.push(el("h2", {}, name), text === null ? el("p", {}, "Not written (yet).") : el("pre", {"data-output": name}, text));
  }
  return [el("h1", {}, `task ${task}`),
          el("p", {}, "of job ", link(batchHash("job", {account, job}), job), " ", stateBadge(t.state)),
          ...output,
          el("h2", {}, "Document"), el("pre", {id: "document"}, JSON.stringify(t, null, 2))];
}

// A node's or a task's file (the first MiB), read again at every draw.
async function batchFileView(params) {
  const account = params.get("account") || "";
  const path = params.get("path") || "";
  let text;
  try {
    text = (await batchRead(account, path)).text;
  } catch (error) {
    if (!error.answered) throw error;
    text = error.message;
  }
  return [el("h1", {}, path.split("/").pop()), el("p", {class: "mono"}, `${account}${path}`), el("pre", {id: "log"}, text)];
}

VIEWS["/batch"] = batchView;
VIEWS["/batch/pool"] = poolView;
VIEWS["/batch/job"] = batchJobView;
VIEWS["/batch/task"] = taskView;
VIEWS["/batch/file"] = batchFileView;
