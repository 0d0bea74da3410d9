// The portal's storage browser: accounts' containers and shares, a container's blobs, a share's
// directories, a blob's or file's properties and metadata; upload, delete. Uses app.js's helpers.
"use strict";

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

// What a blob or a file is named by: {account, container, name} or {account, share, path}.
function storageQuery(target) {
  return new URLSearchParams(target).toString();
}

// A file chosen in the page, uploaded to `nameFor(file.name)` of the container or share.
function uploadForm(target, nameFor) {
  const input = el("input", {type: "file", name: "upload"});
  const button = el("button", {type: "button", "data-action": "upload"}, "Upload");
  button.addEventListener("click", async () => {
    const file = input.files[0];
    if (!file) return;
    const where = Object.assign({}, target, target.container !== undefined ? {name: nameFor(file.name)} : {path: nameFor(file.name)});
    if (await change("upload " + file.name, "/portal/api/storage/upload?" + storageQuery(where), file,
                     file.type || "application/octet-stream")) {
      input.value = "";
    }
  });
  return el("p", {class: "actions upload"}, "Upload a file here: ", input, " ", button);
}

async function blobsView(params, redraw) {
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
    : el("tr", {"data-blob": item.name},
         el("td", {}, link(storageHash("blob", {account, container, name: item.name}), item.name.slice(prefix.length))),
         el("td", {}, `${item.size} bytes`),
         el("td", {}, item.contentType || ""), el("td", {}, item.lastModified), el("td", {}, downloadLink(item.downloadUrl))));
  const more = data.nextMarker
    ? link(storageHash("blobs", {account, container, prefix, marker: data.nextMarker}), "next page") : null;
  const listing = [rows.length ? table(["name", "size", "content type", "last modified", ""], rows) : el("p", {}, "Empty."), more];
  // A redraw keeps the upload form (and the file chosen in it).
  if (redraw) return {replace: "#listing", nodes: [actionResult(), ...listing]};
  return [el("h1", {}, `${account} / ${container}`),
          crumbs(container, prefix.split("/").filter((p) => p), (p) => here(p)),
          uploadForm({account, container}, (name) => prefix + name),
          el("div", {id: "listing"}, actionResult(), ...listing)];
}

async function shareView(params, redraw) {
  const account = params.get("account") || "";
  const share = params.get("share") || "";
  const path = params.get("path") || "";
  const query = {account, share, path};
  if (params.get("marker")) query.marker = params.get("marker");
  const data = await getJson("/portal/api/storage/files?" + new URLSearchParams(query).toString());
  const here = (p) => storageHash("files", {account, share, path: p.replace(/\/$/, "")});
  const rows = data.items.map((item) => item.directory
    ? el("tr", {"data-file": item.path}, el("td", {}, link(here(item.path), item.name + "/")), el("td", {}, "directory"), el("td", {}))
    : el("tr", {"data-file": item.path}, el("td", {}, link(storageHash("file", {account, share, path: item.path}), item.name)),
         el("td", {}, `${item.size} bytes`),
         el("td", {}, downloadLink(item.downloadUrl))));
  const more = data.nextMarker
    ? link(storageHash("files", {account, share, path, marker: data.nextMarker}), "next page") : null;
  const listing = [rows.length ? table(["name", "size", ""], rows) : el("p", {}, "Empty."), more];
  if (redraw) return {replace: "#listing", nodes: [actionResult(), ...listing]};
  return [el("h1", {}, `${account} / ${share}`),
          crumbs(share, path.split("/").filter((p) => p), (p) => here(p)),
          uploadForm({account, share}, (name) => (path ? path + "/" : "") + name),
          el("div", {id: "listing"}, actionResult(), ...listing)];
}

// "a=1\nb=2" <-> {a: "1", b: "2"}
function metadataText(metadata) {
  return Object.entries(metadata).map(([name, value]) => `${name}=${value}`).join("\n");
}

function metadataOf(text) {
  const out = {};
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const equals = line.indexOf("=");
    out[(equals < 0 ? line : line.slice(0, equals)).trim()] = equals < 0 ? "" : line.slice(equals + 1);
  }
  return out;
}

let metadataDraft = null;  // what is typed in the metadata field: {key, text} (kept across redraws)

// #/storage/blob?account=&container=&name= or #/storage/file?account=&share=&path=: a blob's or
// file's properties and metadata (edited as NAME=VALUE lines), download, delete.
async function propertiesView(params, redraw) {
  const target = params.has("container")
    ? {account: params.get("account") || "", container: params.get("container") || "", name: params.get("name") || ""}
    : {account: params.get("account") || "", share: params.get("share") || "", path: params.get("path") || ""};
  const data = await getJson("/portal/api/storage/properties?" + storageQuery(target));
  const rows = [["size", `${data.size} bytes`], ["ETag", data.etag], ["created", data.created], ["last modified", data.lastModified],
                ["blob type", data.blobType], ["tier", data.tier], ["lease state", data.leaseState],
                ...Object.entries(data.content).filter(([, v]) => v).map(([k, v]) => [k, v])]
    .filter(([, v]) => v !== undefined)
    .map(([name, value]) => el("tr", {"data-property": name}, el("th", {}, name), el("td", {class: "mono"}, value)));
  const metadata = Object.entries(data.metadata).map(([name, value]) =>
    el("tr", {"data-metadata": name}, el("td", {class: "mono"}, name), el("td", {class: "mono"}, value)));
  const shown = [table(["property", "value"], rows), el("h2", {}, "Metadata"),
                 metadata.length ? table(["name", "value"], metadata) : el("p", {}, "None."), actionResult()];
  if (redraw) return {replace: "#properties", nodes: shown};
  const key = storageQuery(target);
  if (!metadataDraft || metadataDraft.key !== key) metadataDraft = {key, text: metadataText(data.metadata)};
  const field = el("textarea", {name: "metadata", rows: 4, cols: 50});
  field.value = metadataDraft.text;
  field.addEventListener("input", () => { metadataDraft.text = field.value; });
  const save = el("button", {type: "button", "data-action": "metadata"}, "Save the metadata");
  save.addEventListener("click", () => change("metadata", "/portal/api/storage/metadata?" + key,
                                              JSON.stringify({metadata: metadataOf(field.value)})));
  const back = target.container !== undefined
    ? storageHash("blobs", {account: target.account, container: target.container,
                            prefix: target.name.includes("/") ? target.name.slice(0, target.name.lastIndexOf("/") + 1) : ""})
    : storageHash("files", {account: target.account, share: target.share,
                            path: target.path.includes("/") ? target.path.slice(0, target.path.lastIndexOf("/")) : ""});
  const remove = actionButton("delete:" + key, "delete", async () => {
    if (await change("delete", "/portal/api/storage/delete?" + key, "")) location.hash = back;
  });
  return [el("h1", {}, target.name || target.path),
          el("p", {}, "in ", link(back, `${target.account} / ${target.container || target.share}`), " ",
             downloadLink(data.downloadUrl)),
          el("div", {id: "properties"}, ...shown),
          el("p", {class: "actions"}, "Metadata, one NAME=VALUE a line:"), field,
          el("p", {class: "actions"}, save, " ", remove)];
}

VIEWS["/storage"] = storageView;
VIEWS["/storage/blobs"] = blobsView;
VIEWS["/storage/files"] = shareView;
VIEWS["/storage/blob"] = propertiesView;
VIEWS["/storage/file"] = propertiesView;
