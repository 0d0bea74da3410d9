"""The request bodies of the Java SDK's recorded tests, which its session records do not keep.

Rebuilt from the tests (azure-libraries-for-java: AzureTests.testBatchAIJob, TestBatchAI,
TestBatchAIFileServers) and from how that SDK serializes (nulls left out, read-only fields never
sent, a groupable resource's tags `{}`); where a value is the service's answer to what was sent
(a resource group's tags, a network's subnets, a storage account's SKU) it is read from the
recorded answer. The service's defaults (initialNodeCount, the image, maxWallClockTime, ...) are
not in these bodies: the client did not send them.
"""
import json
import re

from .cassette import json_or_none

# Bodies the answers cannot give, per recording file and resource path (lower case, after the
# group). The cluster of testBatchAI mounts the account the test made with the share and the
# container it made through the data plane (not recorded), with the key listKeys gave.
_TABLE = {
    ("testBatchAIJob.json", "/providers/microsoft.batchai/workspaces/ws931282/clusters/cluster534636"): {
        "properties": {
            "vmSize": "Standard_D1_v2",
            "scaleSettings": {"autoScale": {"minimumNodeCount": 1, "maximumNodeCount": 1}},
            "userAccountSettings": {"adminUserName": "tirekicker", "adminUserPassword": "MyPassword"}}},
    ("testBatchAIJob.json", "/providers/microsoft.batchai/workspaces/ws931282/experiments/exp519872/jobs/myjob"): {
        "properties": {
            "cluster": {"id": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg559996/providers/"
                              "Microsoft.BatchAI/workspaces/ws931282/clusters/cluster534636"},
            "nodeCount": 1,
            "containerSettings": {"imageSourceRegistry": {"image": "microsoft/cntk:2.1-gpu-python3.5-cuda8.0-cudnn6.0"}},
            "cntkSettings": {"languageType": "Python",
                             "pythonScriptFilePath": "$AZ_BATCHAI_INPUT_SAMPLE/ConvNet_MNIST.py",
                             "commandLineArgs": "$AZ_BATCHAI_INPUT_SAMPLE $AZ_BATCHAI_OUTPUT_MODEL"},
            "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare",
            "inputDirectories": [{"id": "SAMPLE", "path": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare/mnistcntksample"}],
            "outputDirectories": [
                {"id": "MODEL", "pathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare/model"},
                {"id": "OUTPUT", "pathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare/output", "pathSuffix": "suffix"}]}},
    ("testBatchAI.json", "/providers/microsoft.batchai/workspaces/ws242740/clusters/cluster191477"): {
        "properties": {
            "vmSize": "Standard_D1_v2",
            "vmPriority": "lowpriority",
            "scaleSettings": {"autoScale": {"minimumNodeCount": 1, "maximumNodeCount": 1}},
            "virtualMachineConfiguration": {"imageReference": {
                "publisher": "microsoft-ads", "offer": "linux-data-science-vm-ubuntu", "sku": "linuxdsvmubuntu"}},
            "nodeSetup": {
                "setupTask": {"commandLine": "echo Hello World!", "stdOutErrPathPrefix": "./outputpath"},
                "mountVolumes": {
                    "azureFileShares": [{"accountName": "cluster738274",
                                         "azureFileUrl": "https://cluster738274.file.core.windows.net/myfileshare",
                                         "credentials": {"accountKey": "MGMT_PLACEHOLDER"},
                                         "relativeMountPath": "azurefileshare"}],
                    "azureBlobFileSystems": [{"accountName": "cluster738274", "containerName": "mycontainer",
                                              "credentials": {"accountKey": "MGMT_PLACEHOLDER"},
                                              "relativeMountPath": "myblobsystem"}]},
                "performanceCountersSettings": {"appInsightsReference": {
                    "component": {"id": "appinsightsId"}, "instrumentationKey": "appInsightsKey"}}},
            "userAccountSettings": {"adminUserName": "tirekicker", "adminUserPassword": "MyPassword"},
            "subnet": {"id": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg729517/providers/"
                             "Microsoft.Network/virtualNetworks/vnet2d0803745/subnets/MySubnet"}}},
    ("testBatchAIFileServer.json", "/providers/microsoft.batchai/workspaces/ws69756d/fileservers/fsa2e905729d"): {
        "properties": {
            "vmSize": "Standard_D1_v2",
            "sshConfiguration": {"userAccountSettings": {"adminUserName": "tirekicker", "adminUserPassword": "MyPassword!"}},
            "dataDisks": {"diskSizeInGB": 10, "cachingType": "readwrite", "diskCount": 2, "storageAccountType": "Standard_LRS"},
            "subnet": {"id": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg784489/providers/"
                             "Microsoft.Network/virtualNetworks/vnet0b7442803/subnets/MySubnet"}}},
}

_AFTER_GROUP = re.compile(r"^/subscriptions/[^/]+/resourcegroups/[^/]+(/.*)?$", re.I)


def _answer(exchanges, x):
    """The recorded resource: the request's own answer, else the next GET of its URL that has one."""
    doc = json_or_none(x.response_body)
    if isinstance(doc, dict) and "id" in doc:
        return doc
    for later in exchanges[x.index + 1:]:
        if later.method == "GET" and later.path.lower() == x.path.lower() and later.status == 200:
            doc = json_or_none(later.response_body)
            if isinstance(doc, dict):
                return doc
    return {}


def rebuilt_body(recording_file, x, exchanges):
    """The JSON text the Java test sent with x, or None where it sent none."""
    if x.method not in ("PUT", "PATCH"):
        return None  # listKeys and the other actions of these tests take no body
    m = _AFTER_GROUP.match(x.path)
    tail = (m.group(1) or "").lower() if m else ""
    if (recording_file, tail) in _TABLE:
        return json.dumps(_TABLE[(recording_file, tail)])
    answer = _answer(exchanges, x)
    if tail == "":  # a resource group: the test's tagging interceptor added the tags
        return json.dumps({"location": answer.get("location"), "tags": answer.get("tags", {})})
    if re.fullmatch(r"/providers/microsoft\.batchai/workspaces/[^/]+", tail):
        return json.dumps({"location": answer.get("location"), "tags": {}})
    if re.fullmatch(r"/providers/microsoft\.batchai/workspaces/[^/]+/experiments/[^/]+", tail):
        return None  # the SDK's experiment create has no body
    if re.fullmatch(r"/providers/microsoft\.storage/storageaccounts/[^/]+", tail):
        return json.dumps({"sku": {"name": answer["sku"]["name"]}, "kind": answer["kind"],
                           "location": answer["location"], "tags": {}})
    if re.fullmatch(r"/providers/microsoft\.network/virtualnetworks/[^/]+", tail):
        props = answer["properties"]
        return json.dumps({"location": answer["location"], "tags": {},
                           "properties": {"addressSpace": props["addressSpace"], "dhcpOptions": props["dhcpOptions"],
                                          "subnets": [{"properties": {"addressPrefix": s["properties"]["addressPrefix"]},
                                                       "name": s["name"]} for s in props["subnets"]]}})
    raise KeyError(f"no rebuilt body for {recording_file} {x.method} {x.path}")
