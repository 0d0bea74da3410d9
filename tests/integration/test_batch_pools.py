"""The Azure Batch service's pools through the azure-batch SDK (python3-azure):
add, get, exists, list with paging, patch, delete; SharedKey authentication; errors in the
service's OData shape naming the property; accounts isolated from each other; az batch."""
import base64
import json
import os
import unittest

import requests
from azure.batch import BatchServiceClient
from azure.batch import models as bm
from azure.batch.batch_auth import SharedKeyAuth, SharedKeyCredentials

import harness

DEV_BATCH = harness.DEV_BATCH_ACCOUNT
DEV_BATCH_KEY = harness.DEV_BATCH_KEY
OTHER = "teambatch"
OTHER_KEY = base64.b64encode(b"another account's key, 32 bytes!").decode()
API = "2022-10-01.16.0"
# A managed image, one of the three forms of image id the service takes.
IMAGE_ID = "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/images/ubuntu"


def vm_configuration():
    return bm.VirtualMachineConfiguration(
        image_reference=bm.ImageReference(publisher="microsoft-azure-batch", offer="ubuntu-server-container",
                                          sku="20-04-lts", version="latest"),
        node_agent_sku_id="batch.node.ubuntu 20.04")


class BatchTestCase(unittest.TestCase):
    """One emulator for the class (with emulator_args and emulator_env) and an azure-batch client of
    devbatchaccount1."""
    emulator_args = []
    emulator_env = None  # the emulator's environment; this process's when None

    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=list(cls.emulator_args), env=cls.emulator_env).start()
        cls.url = cls.emu.endpoints["batch"]
        cls.client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=cls.url)

    @classmethod
    def tearDownClass(cls):
        cls.emu.close()

    def pool(self, pool_id, dedicated=1, low_priority=0, slots=1, start_task=None):
        self.client.pool.add(bm.PoolAddParameter(
            id=pool_id, vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
            target_dedicated_nodes=dedicated, target_low_priority_nodes=low_priority, task_slots_per_node=slots,
            start_task=start_task))
        harness.wait_for(lambda: self.client.pool.get(pool_id).allocation_state == bm.AllocationState.steady,
                         what=f"pool {pool_id} to be steady")

    def job(self, job_id, pool_id, **kwargs):
        self.client.job.add(bm.JobAddParameter(id=job_id, pool_info=bm.PoolInformation(pool_id=pool_id), **kwargs))

    def task(self, job_id, task_id, command_line, **kwargs):
        self.client.task.add(job_id, bm.TaskAddParameter(id=task_id, command_line=command_line, **kwargs))

    def state_of(self, job_id, task_id, state, timeout=30):
        def reached():
            task = self.client.task.get(job_id, task_id)
            return task if task.state == state else None
        return harness.wait_for(reached, timeout=timeout, what=f"task {task_id} to be {state}")

    def read(self, job_id, task_id, path):
        """A file of the task's directory (stdout.txt, wd/...), as text."""
        return b"".join(self.client.file.get_from_task(job_id, task_id, path)).decode()

    def job_state(self, job_id, state, timeout=30):
        def reached():
            job = self.client.job.get(job_id)
            return job if job.state == state else None
        return harness.wait_for(reached, timeout=timeout, what=f"job {job_id} to be {state}")

    def node_state(self, pool_id, node_id, state, timeout=30):
        def reached():
            node = self.client.compute_node.get(pool_id, node_id)
            return node if node.state == state else None
        return harness.wait_for(reached, timeout=timeout, what=f"node {node_id} to be {state}")

    def error(self, call, *args, **kwargs):
        with self.assertRaises(bm.BatchErrorException) as caught:
            call(*args, **kwargs)
        return caught.exception.error

    def preempt(self, pool_id, node_id, body=None):
        return requests.post(f"{self.emu.endpoints['batch']}/emulator/pools/{pool_id}/nodes/{node_id}/preempt", json=body,
                             auth=SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY))

    def raw(self, method, path, body=None, account=DEV_BATCH, key=DEV_BATCH_KEY, auth=True, headers=None):
        """A request as the SDK signs it, with a body (malformed ones too) and headers of our own."""
        headers = {"Content-Type": "application/json; odata=minimalmetadata", **(headers or {})}
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        separator = "&" if "?" in path else "?"
        return requests.request(method, f"{self.url}{path}{separator}api-version={API}", data=data, headers=headers,
                                auth=SharedKeyAuth("authorization", account, key) if auth else None)


class BatchPools(BatchTestCase):
    emulator_args = ["--batch-account", f"{OTHER}:{OTHER_KEY}"]

    def error_of(self, call):
        with self.assertRaises(bm.BatchErrorException) as caught:
            call()
        return caught.exception

    def test_a_pool_added_got_listed_patched_and_deleted(self):
        pool = bm.PoolAddParameter(id="mnist-pool", vm_size="STANDARD_NC6", virtual_machine_configuration=vm_configuration(),
                                   target_low_priority_nodes=0, display_name="MNIST",
                                   start_task=bm.StartTask(command_line="/bin/bash -c 'pip install torch'", wait_for_success=True))
        self.client.pool.add(pool)
        got = self.client.pool.get("mnist-pool")
        self.assertEqual(got.id, "mnist-pool")
        self.assertEqual(got.vm_size, "standard_nc6")  # the service lower-cases it (its recordings show)
        self.assertEqual(got.virtual_machine_configuration.image_reference.version, "latest")
        self.assertEqual(got.task_scheduling_policy.node_fill_type, bm.ComputeNodeFillType.spread)
        self.assertEqual(got.state, bm.PoolState.active)
        # Resizing at first, with no node to get, as the service's recordings show a pool just added.
        self.assertEqual(got.allocation_state, bm.AllocationState.resizing)
        got = harness.wait_for(lambda: (lambda p: p if p.allocation_state == bm.AllocationState.steady else None)(
            self.client.pool.get("mnist-pool")), what="the pool to settle")
        self.assertEqual((got.target_dedicated_nodes, got.target_low_priority_nodes), (0, 0))
        self.assertEqual(got.current_dedicated_nodes, 0)
        self.assertEqual(got.virtual_machine_configuration.node_agent_sku_id, "batch.node.ubuntu 20.04")
        self.assertEqual(got.start_task.command_line, "/bin/bash -c 'pip install torch'")
        self.assertTrue(got.start_task.wait_for_success)
        self.assertEqual(got.url, f"{self.url}/pools/mnist-pool")
        self.assertEqual(got.resize_timeout.total_seconds(), 15 * 60)
        self.assertTrue(got.e_tag)
        self.assertTrue(self.client.pool.exists("MNIST-POOL"))  # ids are unique without regard to case
        self.assertIn("mnist-pool", [p.id for p in self.client.pool.list()])

        self.client.pool.patch("mnist-pool", bm.PoolPatchParameter(metadata=[bm.MetadataItem(name="owner", value="ml")]))
        patched = self.client.pool.get("mnist-pool")
        self.assertEqual([(m.name, m.value) for m in patched.metadata], [("owner", "ml")])
        self.assertNotEqual(patched.e_tag, got.e_tag)

        self.client.pool.delete("mnist-pool")
        # deleting until its nodes have gone (none here), then gone
        harness.wait_for(lambda: not self.client.pool.exists("mnist-pool"), timeout=30, what="the pool to go")
        error = self.error_of(lambda: self.client.pool.get("mnist-pool"))
        self.assertEqual(error.error.code, "PoolNotFound")
        self.assertEqual(error.response.status_code, 404)

    def test_a_list_is_paged(self):
        ids = [f"page-{i}" for i in range(5)]
        for i in ids:
            self.client.pool.add(bm.PoolAddParameter(id=i, vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration()))
        listed = [p.id for p in self.client.pool.list(bm.PoolListOptions(max_results=2)) if p.id.startswith("page-")]
        self.assertEqual(listed, ids)
        first = self.raw("GET", "/pools", None).json()
        self.assertIn("odata.metadata", first)
        r = requests.get(f"{self.url}/pools?api-version={API}&maxresults=2", auth=SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY))
        self.assertEqual(len(r.json()["value"]), 2)
        self.assertIn("$skiptoken=", r.json()["odata.nextLink"])

    def test_the_pool_as_the_service_shows_it(self):
        """What the recordings of the real service show it fills in, normalizes and hides."""
        r = self.raw("POST", "/pools", {
            "id": "shown", "vmSize": "Standard_A1", "taskSchedulingPolicy": {"nodeFillType": "pack"},
            "virtualMachineConfiguration": {
                "imageReference": {"publisher": "Canonical", "offer": "UbuntuServer", "sku": "16.04-LTS"},
                "nodeAgentSKUId": "batch.node.ubuntu 16.04", "dataDisks": [{"lun": 1, "diskSizeGB": 50}]},
            "userAccounts": [{"name": "u1", "password": "kt#_gahr!@aGERDXA", "elevationLevel": "admin"}],
            "mountConfiguration": [{"azureBlobFileSystemConfiguration": {
                "accountName": "devstoreaccount1", "containerName": "data", "accountKey": "a2V5", "relativeMountPath": "data"}}]})
        self.assertEqual(r.status_code, 201, r.text)
        self.assertTrue(r.headers.get("request-id"))
        r = self.raw("GET", "/pools/shown")
        self.assertTrue(r.headers.get("request-id"))
        pool = r.json()
        self.assertEqual(pool["vmSize"], "standard_a1")
        self.assertEqual(pool["taskSchedulingPolicy"], {"nodeFillType": "Pack"})
        self.assertEqual(pool["virtualMachineConfiguration"]["imageReference"]["version"], "latest")
        self.assertEqual(pool["virtualMachineConfiguration"]["dataDisks"],
                         [{"lun": 1, "diskSizeGB": 50, "caching": "none", "storageAccountType": "standard_lrs"}])
        self.assertEqual(pool["userAccounts"], [{"name": "u1", "elevationLevel": "admin"}])  # never the password
        self.assertNotIn("kt#_gahr", self.raw("GET", "/pools").text)
        self.assertEqual(pool["mountConfiguration"][0]["azureBlobFileSystemConfiguration"],
                         {"accountName": "devstoreaccount1", "containerName": "data", "relativeMountPath": "data"})
        r = self.raw("POST", "/pools", {"id": "badfill", "vmSize": "a", "taskSchedulingPolicy": {"nodeFillType": "tight"},
                                        "virtualMachineConfiguration": {"imageReference": {"virtualMachineImageId": IMAGE_ID},
                                                                        "nodeAgentSKUId": "a"}})
        self.assertEqual((r.status_code, r.json()["values"][0]["value"]), (400, "taskSchedulingPolicy.nodeFillType"))
        self.assertTrue(r.headers.get("request-id"))
        self.assertEqual(self.raw("GET", "/pools/badfill").status_code, 404)

    def test_a_pools_subnet_and_image_are_checked(self):
        """The recordings: the service refused a subnet it could not use and an image id of
        another form (400 InvalidPropertyValue naming subnetId / virtualMachineImageId)."""
        def pool(pool_id, image=None, subnet=None):
            body = {"id": pool_id, "vmSize": "Standard_A1", "virtualMachineConfiguration": {
                "imageReference": image or {"publisher": "Canonical", "offer": "UbuntuServer", "sku": "16.04-LTS"},
                "nodeAgentSKUId": "batch.node.ubuntu 16.04"}}
            if subnet:
                body["networkConfiguration"] = {"subnetId": subnet}
            return self.raw("POST", "/pools", body)
        group = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/batchnet"
        subnet = group + "/providers/Microsoft.Network/virtualNetworks/vnet1/subnets/subnet1"
        r = pool("unknown-subnet", subnet=subnet)
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidPropertyValue"))
        self.assertEqual(r.json()["values"][0], {"key": "PropertyName", "value": "subnetId"})
        self.assertEqual(pool("malformed-subnet", subnet="/not/a/subnet").status_code, 400)
        self.assertEqual(pool("long-subnet", subnet=subnet + "x" * 100000).status_code, 400)
        # Once the network exists in the emulator's ARM, its subnet serves.
        arm = requests.Session()
        arm.trust_env = False  # REQUESTS_CA_BUNDLE would override verify
        arm.verify = self.emu.endpoints["ca_cert"]
        arm.headers["Authorization"] = "Bearer any"
        base = self.emu.endpoints["arm"]
        self.assertIn(arm.put(f"{base}{group}?api-version=2020-06-01", json={"location": "eastus"}).status_code, (200, 201))
        made = arm.put(f"{base}{group}/providers/Microsoft.Network/virtualNetworks/vnet1?api-version=2020-11-01", json={
            "location": "eastus", "properties": {"addressSpace": {"addressPrefixes": ["10.0.0.0/16"]},
                                                 "subnets": [{"name": "subnet1", "properties": {"addressPrefix": "10.0.0.0/24"}}]}})
        self.assertIn(made.status_code, (200, 201), made.text)
        self.assertEqual(pool("on-subnet", subnet=subnet.replace("subnet1", "SUBNET1")).status_code, 201)
        gallery = group + "/providers/Microsoft.Compute/gallery/FakeGallery/images/FakeImage/versions/version"
        r = pool("bad-image", image={"virtualMachineImageId": gallery})
        self.assertEqual((r.status_code, r.json()["values"][0]["value"]), (400, "virtualMachineImageId"))
        self.assertEqual(pool("good-image", image={"virtualMachineImageId": gallery.replace("/gallery/", "/galleries/")})
                         .status_code, 201)
        self.assertEqual([p.id for p in self.client.pool.list() if p.id.endswith(("subnet", "image"))],
                         ["good-image", "on-subnet"])  # listed by id, as the service lists them

    def test_lists_go_by_id_with_filter_select_and_pages(self):
        """The recordings: pools listed by id whatever the order they were added in, $filter
        (startswith) and $select (id,state) as the SDK sends them, pages of maxresults."""
        for pool_id in ("lst-c", "lst-a", "LST-b", "lst-d", "other"):
            self.client.pool.add(bm.PoolAddParameter(id=pool_id, vm_size="STANDARD_D1",
                                                     virtual_machine_configuration=vm_configuration()))
        options = bm.PoolListOptions(filter="startswith(id,'lst-') or startswith(id,'LST-')", select="id,state",
                                     max_results=2)
        listed = list(self.client.pool.list(pool_list_options=options))  # the SDK follows the nextLinks
        self.assertEqual([p.id for p in listed], ["lst-a", "LST-b", "lst-c", "lst-d"])
        self.assertEqual({(p.state, p.vm_size) for p in listed}, {(bm.PoolState.active, None)})
        first = self.raw("GET", "/pools?$filter=" + requests.utils.quote("startswith(id,'lst-')") + "&$select=id&maxresults=1")
        page = first.json()
        self.assertEqual(page["value"], [{"id": "lst-a"}])
        self.assertIn("$filter=", page["odata.nextLink"])
        self.assertIn("$select=id", page["odata.nextLink"])
        r = self.raw("GET", "/pools?$filter=" + requests.utils.quote("state eq 'active' and"))
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidQueryParameterValue"))
        self.assertEqual(r.json()["values"][0], {"key": "QueryParameterName", "value": "$filter"})
        r = self.raw("GET", "/pools?$select=id,,state")
        self.assertEqual((r.status_code, r.json()["values"][0]["value"]), (400, "$select"))
        self.assertEqual([p.id for p in self.client.pool.list(pool_list_options=bm.PoolListOptions(
            filter="state eq 'deleting'"))], [])

    def test_bad_pools_are_refused_naming_the_property(self):
        def values(error):
            return {v.key: v.value for v in (error.error.values or [])}
        self.client.pool.add(bm.PoolAddParameter(id="twice", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration()))
        error = self.error_of(lambda: self.client.pool.add(
            bm.PoolAddParameter(id="TWICE", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration())))
        self.assertEqual((error.response.status_code, error.error.code), (409, "PoolExists"))
        error = self.error_of(lambda: self.client.pool.add(
            bm.PoolAddParameter(id="bad id!", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration())))
        self.assertEqual((error.response.status_code, error.error.code), (400, "InvalidPropertyValue"))
        self.assertEqual(values(error)["PropertyName"], "id")
        error = self.error_of(lambda: self.client.pool.add(
            bm.PoolAddParameter(id="auto", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                enable_auto_scale=True)))
        self.assertEqual(values(error)["PropertyName"], "autoScaleFormula")
        # What the SDK would not send: raw requests.
        r = self.raw("POST", "/pools", {"id": "novm", "vmSize": "STANDARD_D1"})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredProperty"))
        self.assertEqual(r.json()["values"][0], {"key": "PropertyName", "value": "virtualMachineConfiguration"})
        r = self.raw("POST", "/pools", {"id": "noagent", "vmSize": "STANDARD_D1",
                                        "virtualMachineConfiguration": {"imageReference": {"virtualMachineImageId": IMAGE_ID}}})
        self.assertEqual(r.json()["values"][0]["value"], "virtualMachineConfiguration.nodeAgentSKUId")
        r = self.raw("POST", "/pools", {"id": "neg", "vmSize": "STANDARD_D1", "targetDedicatedNodes": -1,
                                        "virtualMachineConfiguration": {"imageReference": {"virtualMachineImageId": IMAGE_ID},
                                                                        "nodeAgentSKUId": "a"}})
        self.assertEqual(r.json()["values"][0]["value"], "targetDedicatedNodes")
        r = self.raw("POST", "/pools", "{not json")
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidRequestBody"))
        self.assertTrue(r.json()["message"]["value"].startswith("The specified Request Body is not syntactically valid."))
        r = self.raw("PATCH", "/pools/twice", {"vmSize": "STANDARD_D2"})
        self.assertEqual((r.status_code, r.json()["values"][0]["value"]), (400, "vmSize"))
        # Enum values are case-insensitive, as on the node routes; others name the property.
        r = self.raw("POST", "/pools/twice/resize", {"targetDedicatedNodes": 0, "nodeDeallocationOption": "Terminate"})
        self.assertEqual(r.status_code, 202, r.text)
        r = self.raw("POST", "/pools/twice/resize", {"targetDedicatedNodes": 0, "nodeDeallocationOption": "later"})
        self.assertEqual((r.status_code, r.json()["values"][0]["value"]), (400, "nodeDeallocationOption"))
        r = requests.get(f"{self.url}/pools", auth=SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY))
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredQueryParameter"))

    def test_shared_key_authentication(self):
        r = self.raw("GET", "/pools", key=OTHER_KEY)
        self.assertEqual((r.status_code, r.json()["code"]), (403, "AuthenticationFailed"))
        self.assertIn("The emulator signed", json.dumps(r.json()["values"]))
        r = self.raw("GET", "/pools", account="nosuchaccount", key=OTHER_KEY)
        self.assertEqual(r.status_code, 403)
        r = self.raw("GET", "/pools", auth=False)
        self.assertEqual((r.status_code, r.json()["code"]), (401, "AuthenticationFailed"))
        # A bearer token must come with the account in the path (the endpoint serves every account).
        r = requests.get(f"{self.url}/pools?api-version={API}", headers={"Authorization": "Bearer token"})
        self.assertEqual((r.status_code, r.json()["code"]), (401, "AuthenticationFailed"))
        self.assertIn("does not name the Batch account", r.json()["values"][0]["value"])
        r = requests.get(f"{self.url}/pools?api-version={API}", headers={"Authorization": "Basic dTpw"})
        self.assertEqual(r.status_code, 401)

    def test_the_account_in_the_path_over_https_and_http(self):
        """The accountEndpoint's form, HOST:PORT/ACCOUNT: TLS and plain HTTP on the same port, the
        account taken off the path, the documents' urls under it."""
        self.client.pool.add(bm.PoolAddParameter(id="in-path", vm_size="STANDARD_D1",
                                                 virtual_machine_configuration=vm_configuration()))
        https = self.url.replace("http://", "https://", 1)
        for base in (https, self.url):
            client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=f"{base}/{DEV_BATCH}")
            client.config.connection.verify = self.emu.endpoints["ca_cert"]
            pool = client.pool.get("in-path")
            self.assertEqual(pool.url, f"{base}/{DEV_BATCH}/pools/in-path")
            # The other account's pools stay its own, and its key does not sign for this account's path.
            other = BatchServiceClient(SharedKeyCredentials(OTHER, OTHER_KEY), batch_url=f"{base}/{OTHER}")
            other.config.connection.verify = self.emu.endpoints["ca_cert"]
            self.assertNotIn("in-path", [p.id for p in other.pool.list()])
        r = requests.get(f"{https}/{DEV_BATCH}/pools?api-version={API}", verify=self.emu.endpoints["ca_cert"],
                         auth=SharedKeyAuth("authorization", OTHER, OTHER_KEY))
        self.assertEqual((r.status_code, r.json()["code"]), (403, "AuthenticationFailed"))
        self.assertIn("addressed to the account 'devbatchaccount1'", r.json()["values"][0]["value"])
        # Without --strict-auth a bearer token is taken as it comes (as ARM takes it).
        r = requests.get(f"{https}/{DEV_BATCH}/pools/in-path?api-version={API}", verify=self.emu.endpoints["ca_cert"],
                         headers={"Authorization": "Bearer any.token.at-all"})
        self.assertEqual((r.status_code, r.json()["id"]), (200, "in-path"))
        # A first segment that names no account is not taken off: a pool named like an account path.
        r = self.raw("GET", "/nosuchaccount/pools")
        self.assertEqual(r.status_code, 404)

    def test_accounts_see_only_their_own_pools(self):
        other = BatchServiceClient(SharedKeyCredentials(OTHER, OTHER_KEY), batch_url=self.url)
        other.pool.add(bm.PoolAddParameter(id="private", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration()))
        self.assertTrue(other.pool.exists("private"))
        self.assertFalse(self.client.pool.exists("private"))
        self.assertNotIn("private", [p.id for p in self.client.pool.list()])

    def test_az_batch_pool_list(self):
        self.client.pool.add(bm.PoolAddParameter(id="for-az", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration()))
        env = dict(os.environ, AZURE_CONFIG_DIR=os.path.join(self.emu.location, "az"))
        r = harness.az(["batch", "pool", "list", "--account-name", DEV_BATCH, "--account-key", DEV_BATCH_KEY,
                        "--account-endpoint", self.url, "-o", "json"], env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("for-az", [p["id"] for p in json.loads(r.stdout)])


class BatchNodes(BatchTestCase):
    """A pool's compute nodes: they join for its targets, run its start task without a shell,
    leave on a resize down or a delete."""

    def add(self, pool_id, command_line, dedicated=0, low_priority=0, retries=0, wait=True):
        self.client.pool.add(bm.PoolAddParameter(
            id=pool_id, vm_size="STANDARD_NC6", virtual_machine_configuration=vm_configuration(),
            target_dedicated_nodes=dedicated, target_low_priority_nodes=low_priority,
            start_task=bm.StartTask(command_line=command_line, wait_for_success=wait, max_task_retry_count=retries,
                                    environment_settings=[bm.EnvironmentSetting(name="GREETING", value="hello")])))

    def nodes_settled(self, pool_id, count, state):
        def settled():
            nodes = list(self.client.compute_node.list(pool_id))
            return nodes if len(nodes) == count and all(n.state == state for n in nodes) else None
        return harness.wait_for(settled, timeout=30, what=f"{count} node(s) {state} in {pool_id}")

    def test_nodes_join_run_the_start_task_and_follow_resizes(self):
        self.add("workers", "/bin/sh -c 'echo $GREETING from $AZ_BATCH_NODE_ID; touch $AZ_BATCH_NODE_SHARED_DIR/ready'",
                 dedicated=2, low_priority=1)
        nodes = self.nodes_settled("workers", 3, bm.ComputeNodeState.idle)
        pool = self.client.pool.get("workers")
        self.assertEqual(pool.allocation_state, bm.AllocationState.steady)
        self.assertEqual((pool.current_dedicated_nodes, pool.current_low_priority_nodes), (2, 1))
        self.assertEqual(sorted(n.is_dedicated for n in nodes), [False, True, True])
        for node in nodes:
            self.assertRegex(node.id, r"^tvmps_[0-9a-f]{64}_[dp]$")
            self.assertEqual((node.certificate_references, node.last_boot_time), ([], node.allocation_time))
            self.assertEqual(node.start_task_info.state, bm.StartTaskState.completed)
            self.assertEqual((node.start_task_info.exit_code, node.start_task_info.result), (0, bm.TaskExecutionResult.success))
            out = b"".join(self.client.file.get_from_compute_node("workers", node.id, "startup/stdout.txt")).decode()
            self.assertEqual(out, f"hello from {node.id}\n")
        self.assertEqual(self.client.compute_node.get("workers", nodes[0].id).ip_address, nodes[0].ip_address)

        r = self.raw("POST", f"/pools/workers/nodes/{nodes[0].id}/disablescheduling", {})
        self.assertEqual(r.headers["DataServiceId"], f"{self.url}/pools/workers/nodes/{nodes[0].id}/disablescheduling")
        self.raw("POST", f"/pools/workers/nodes/{nodes[0].id}/enablescheduling")

        self.client.pool.resize("workers", bm.PoolResizeParameter(target_dedicated_nodes=1, target_low_priority_nodes=0))
        self.nodes_settled("workers", 1, bm.ComputeNodeState.idle)
        pool = harness.wait_for(lambda: (lambda p: p if p.allocation_state == bm.AllocationState.steady else None)(
            self.client.pool.get("workers")), what="the resize to settle")
        self.assertEqual((pool.current_dedicated_nodes, pool.current_low_priority_nodes), (1, 0))

        self.client.pool.delete("workers")
        harness.wait_for(lambda: not self.client.pool.exists("workers"), timeout=30, what="the pool to go")

    def test_stop_resize_update_properties_and_node_counts(self):
        """The recordings' stopresize (202; the targets stay, ResizeStopped while short of them),
        updateproperties (204; replaces what it names, removes a start task it does not name),
        nodecounts (per pool and state) and supportedimages."""
        self.add("counted", "/bin/true", dedicated=2)
        self.nodes_settled("counted", 2, bm.ComputeNodeState.idle)
        counts = {c.pool_id: c for c in self.client.account.list_pool_node_counts()}
        self.assertEqual((counts["counted"].dedicated.idle, counts["counted"].dedicated.total,
                          counts["counted"].low_priority.total), (2, 2, 0))
        filtered = self.raw("GET", "/nodecounts?$filter=" + requests.utils.quote("poolId eq 'nothing'")).json()
        self.assertEqual(filtered["value"], [])
        # Resizing while a node with a running task leaves at its task's end (taskcompletion):
        # stopped there, the node stays, the target too, and ResizeStopped says why.
        self.client.job.add(bm.JobAddParameter(id="held", pool_info=bm.PoolInformation(pool_id="counted")))
        self.client.task.add("held", bm.TaskAddParameter(id="long", command_line="/bin/sleep 60"))
        harness.wait_for(lambda: self.client.task.get("held", "long").state == bm.TaskState.running, timeout=30,
                         what="the task to run")
        self.client.pool.resize("counted", bm.PoolResizeParameter(target_dedicated_nodes=0,
                                                                  node_deallocation_option="taskcompletion"))
        self.assertEqual(self.client.pool.get("counted").allocation_state, bm.AllocationState.resizing)
        # The idle node leaves at once, the busy one at its task's end: stopped once the first has
        # gone (a stop that came first would keep both, as the service's would).
        harness.wait_for(lambda: self.client.pool.get("counted").current_dedicated_nodes == 1, timeout=30,
                         what="the idle node to leave")
        r = self.raw("POST", "/pools/counted/stopresize")
        self.assertEqual(r.status_code, 202, r.text)
        self.assertEqual(r.headers["DataServiceId"], f"{self.url}/pools/counted/stopresize")
        pool = harness.wait_for(lambda: (lambda p: p if p.allocation_state == bm.AllocationState.steady else None)(
            self.client.pool.get("counted")), timeout=30, what="the stopped pool to be steady")
        self.assertEqual((pool.target_dedicated_nodes, pool.current_dedicated_nodes), (0, 1))
        self.assertEqual([e.code for e in pool.resize_errors], ["ResizeStopped"])
        # A new resize goes on from there, without the error.
        self.client.task.terminate("held", "long")
        self.client.pool.resize("counted", bm.PoolResizeParameter(target_dedicated_nodes=1))
        self.nodes_settled("counted", 1, bm.ComputeNodeState.idle)
        self.assertIsNone(self.client.pool.get("counted").resize_errors)
        self.assertEqual(self.raw("POST", "/pools/counted/stopresize").status_code, 202)  # steady: nothing to stop

        r = self.raw("POST", "/pools/counted/updateproperties", {
            "certificateReferences": [], "applicationPackageReferences": [], "metadata": [{"name": "foo", "value": "bar"}]})
        self.assertEqual(r.status_code, 204, r.text)
        self.assertTrue(r.headers.get("ETag"))
        pool = self.client.pool.get("counted")
        self.assertEqual(([(m.name, m.value) for m in pool.metadata], pool.start_task), ([("foo", "bar")], None))
        r = self.raw("POST", "/pools/counted/updateproperties", {"certificateReferences": [], "metadata": []})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredProperty"))
        self.assertEqual(r.json()["values"][0]["value"], "applicationPackageReferences")
        r = self.raw("POST", "/pools/counted/updateproperties", {"certificateReferences": [], "metadata": [],
                                                                  "applicationPackageReferences": [], "vmSize": "x"})
        self.assertEqual((r.status_code, r.json()["values"][0]["value"]), (400, "vmSize"))
        self.assertEqual(self.raw("POST", "/pools/none/updateproperties", {}).status_code, 404)

        images = list(self.client.account.list_supported_images())
        self.assertIn("batch.node.ubuntu 20.04", {i.node_agent_sku_id for i in images})
        self.assertTrue(all(i.image_reference.version == "latest" for i in images))
        windows = self.raw("GET", "/supportedimages?$filter=" + requests.utils.quote("osType eq 'windows'")).json()["value"]
        self.assertTrue(windows and all(i["osType"] == "windows" for i in windows))

    def test_the_command_line_is_not_given_to_a_shell(self):
        # Under a shell this would fail (false); without one, true gets three arguments.
        self.add("noshell", "true && false", dedicated=1)
        node = self.nodes_settled("noshell", 1, bm.ComputeNodeState.idle)[0]
        self.assertEqual(node.start_task_info.exit_code, 0)

    def test_a_failing_start_task_is_retried_then_the_node_is_unusable_for_tasks(self):
        self.add("broken", "/bin/sh -c 'echo trying >&2; exit 3'", dedicated=1, retries=2)
        node = self.nodes_settled("broken", 1, bm.ComputeNodeState.start_task_failed)[0]
        info = node.start_task_info
        self.assertEqual((info.exit_code, info.retry_count, info.result), (3, 2, bm.TaskExecutionResult.failure))
        self.assertEqual(info.failure_info.category, bm.ErrorCategory.user_error)
        err = b"".join(self.client.file.get_from_compute_node("broken", node.id, "startup/stderr.txt")).decode()
        self.assertEqual(err, "trying\n" * 3)
        # Without waitForSuccess the node is idle all along, and stays so when the task fails.
        self.add("lenient", "/bin/sh -c 'exit 1'", dedicated=1, wait=False)
        node = self.nodes_settled("lenient", 1, bm.ComputeNodeState.idle)[0]
        harness.wait_for(lambda: self.client.compute_node.get("lenient", node.id).start_task_info.state == bm.StartTaskState.completed,
                         timeout=30, what="the start task to end")
        self.assertEqual(self.client.compute_node.get("lenient", node.id).state, bm.ComputeNodeState.idle)

    def test_missing_nodes_and_files(self):
        self.add("empty", "true")
        with self.assertRaises(bm.BatchErrorException) as caught:
            self.client.compute_node.get("empty", "tvmps_nope_d")
        self.assertEqual(caught.exception.error.code, "NodeNotFound")
        with self.assertRaises(bm.BatchErrorException) as caught:
            list(self.client.compute_node.list("nopool"))
        self.assertEqual(caught.exception.error.code, "PoolNotFound")


if __name__ == "__main__":
    unittest.main()
