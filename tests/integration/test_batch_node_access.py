"""How a Batch compute node is reached and what its tasks find on it, through the azure-batch SDK:
user accounts (add, update, delete) written where the node's processes see them, remote login
settings and inbound endpoints, the RDP file of a Windows node, the certificates a pool references
installed in each task's AZ_BATCH_CERTIFICATES_DIR, the node's directories, a task's defaults and
the URLs of the node it ran on."""
import base64
import shutil
import tempfile
from datetime import datetime, timedelta

from azure.batch import models as bm
from azure.storage.blob import BlobServiceClient, ContainerSasPermissions, generate_container_sas

import harness
from test_batch_certificates import make_certificate
from test_batch_pools import BatchTestCase, vm_configuration


class BatchNodeAccess(BatchTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="bai-batch-access-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)
        super().tearDownClass()

    def only_node(self, pool_id):
        nodes = harness.wait_for(lambda: [n for n in self.client.compute_node.list(pool_id) if n.state == bm.ComputeNodeState.idle]
                                 or None, what=f"an idle node of {pool_id}")
        return nodes[0]

    def node_text(self, pool_id, node_id, path):
        return b"".join(self.client.file.get_from_compute_node(pool_id, node_id, path)).decode()

    def test_user_accounts_are_on_the_node(self):
        self.pool("users")
        node = self.only_node("users")
        self.client.compute_node.add_user("users", node.id, bm.ComputeNodeUser(
            name="alice", is_admin=True, password="s3cret!Pass", ssh_public_key="ssh-rsa AAAAB3Nza alice@laptop"))
        self.client.compute_node.add_user("users", node.id, bm.ComputeNodeUser(name="bob", password="other!Pass1"))
        self.assertEqual(self.error(self.client.compute_node.add_user, "users", node.id, bm.ComputeNodeUser(name="alice")).code,
                         "NodeUserExists")
        passwd = self.node_text("users", node.id, "users/passwd").splitlines()
        self.assertEqual([line.split(":")[0] for line in passwd], ["alice", "bob"])
        self.assertEqual(self.node_text("users", node.id, "users/group"), "sudo:x:27:alice\n")
        self.assertEqual(self.node_text("users", node.id, "users/alice/.ssh/authorized_keys"), "ssh-rsa AAAAB3Nza alice@laptop\n")
        # The node's tasks see them, and the password only as its hash.
        self.job("access", "users")
        self.task("access", "who", "/bin/sh -c 'cut -d: -f1,6 $AZ_BATCH_NODE_ROOT_DIR/users/passwd; "
                                   "test -r $AZ_BATCH_NODE_ROOT_DIR/users/shadow && echo readable'")
        self.state_of("access", "who", bm.TaskState.completed)
        out = b"".join(self.client.file.get_from_task("access", "who", "stdout.txt")).decode().splitlines()
        self.assertTrue(out[0].startswith("alice:") and out[0].endswith("/users/alice"), out)
        shadow = self.node_text("users", node.id, "users/shadow")
        self.assertNotIn("s3cret", shadow)
        self.assertTrue(shadow.startswith("alice:$6$"), shadow)
        # An update replaces what can change: no key given, the key is gone.
        self.client.compute_node.update_user("users", node.id, "alice", bm.NodeUpdateUserParameter(password="n3w!Passw0rd"))
        self.assertEqual(self.error(self.client.file.get_from_compute_node, "users", node.id,
                                    "users/alice/.ssh/authorized_keys").code, "FileNotFound")
        self.assertNotEqual(self.node_text("users", node.id, "users/shadow"), shadow)
        self.client.compute_node.delete_user("users", node.id, "bob")
        self.assertEqual(len(self.node_text("users", node.id, "users/passwd").splitlines()), 1)
        self.assertEqual(self.error(self.client.compute_node.delete_user, "users", node.id, "bob").code, "NodeUserNotFound")
        self.assertEqual(self.error(self.client.compute_node.update_user, "users", node.id, "carol",
                                    bm.NodeUpdateUserParameter(password="x")).code, "NodeUserNotFound")
        r = self.raw("POST", f"/pools/users/nodes/{node.id}/users", {"name": "../etc", "password": "x"})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidPropertyValue"))
        self.assertIn({"key": "PropertyName", "value": "name"}, r.json()["values"])
        r = self.raw("POST", f"/pools/users/nodes/{node.id}/users", {"password": "x"})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredProperty"))
        self.assertEqual(self.error(self.client.compute_node.add_user, "users", "tvmps_nope_d",
                                    bm.ComputeNodeUser(name="x", password="y")).code, "NodeNotFound")

    def test_remote_login_and_endpoints(self):
        self.pool("login", dedicated=2)
        nodes = harness.wait_for(lambda: (lambda ns: ns if len(ns) == 2 and all(n.state == bm.ComputeNodeState.idle for n in ns)
                                          else None)(list(self.client.compute_node.list("login"))), what="two idle nodes")
        self.assertEqual([n.id for n in nodes], sorted(n.id for n in nodes))  # listed by id, as the service lists them
        ports = set()
        for node in nodes:
            settings = self.client.compute_node.get_remote_login_settings("login", node.id)
            endpoint, = node.endpoint_configuration.inbound_endpoints
            self.assertTrue(endpoint.name.startswith("SSHRule."))
            self.assertEqual((endpoint.protocol, endpoint.backend_port), (bm.InboundEndpointProtocol.tcp, 22))
            self.assertEqual((settings.remote_login_ip_address, settings.remote_login_port),
                             (endpoint.public_ip_address, endpoint.frontend_port))
            ports.add(settings.remote_login_port)
            self.assertIsNotNone(node.last_boot_time)
        self.assertEqual(ports, {50000, 50001})
        self.assertEqual(self.error(self.client.compute_node.get_remote_desktop, "login", nodes[0].id).code,
                         "OperationNotValidOnNode")

    def test_a_windows_node_has_an_rdp_file(self):
        self.client.pool.add(bm.PoolAddParameter(id="paas", vm_size="small", target_dedicated_nodes=1,
                                                 cloud_service_configuration=bm.CloudServiceConfiguration(os_family="5")))
        node = self.only_node("paas")
        rdp = b"".join(self.client.compute_node.get_remote_desktop("paas", node.id)).decode()
        self.assertTrue(rdp.startswith("full address:s:127.0.0.1\r\nLoadBalanceInfo:s:Cookie: mstshash=TVM#TVM_IN_"), rdp)
        self.assertEqual(node.endpoint_configuration.inbound_endpoints[0].name,
                         "Microsoft.WindowsAzure.Plugins.RemoteForwarder.RdpInput")
        self.assertEqual(self.error(self.client.compute_node.get_remote_login_settings, "paas", node.id).code,
                         "OperationNotValidOnNode")
        r = self.raw("POST", f"/pools/paas/nodes/{node.id}/users", {"name": "win", "sshPublicKey": "ssh-rsa AAA", "password": "x"})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidPropertyValue"))
        self.assertIn({"key": "PropertyName", "value": "sshPublicKey"}, r.json()["values"])

    def test_certificates_are_installed_for_the_tasks(self):
        thumbprint, pfx, der = make_certificate(self.dir, "installed", "pfxpass")
        self.client.certificate.add(bm.CertificateAddParameter(
            thumbprint=thumbprint, thumbprint_algorithm="sha1", data=base64.b64encode(pfx).decode(),
            certificate_format="pfx", password="pfxpass"))
        self.client.pool.add(bm.PoolAddParameter(
            id="certs", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(), target_dedicated_nodes=1,
            certificate_references=[bm.CertificateReference(thumbprint=thumbprint, thumbprint_algorithm="sha1",
                                                            visibility=[bm.CertificateVisibility.task])],
            start_task=bm.StartTask(command_line="/bin/sh -c 'ls $AZ_BATCH_CERTIFICATES_DIR | wc -l'", wait_for_success=True)))
        node = self.only_node("certs")
        self.job("with-certs", "certs")
        self.task("with-certs", "list", "/bin/sh -c 'cd $AZ_BATCH_CERTIFICATES_DIR && ls && cat *.pw && echo && stat -c %a *.pfx'")
        self.state_of("with-certs", "list", bm.TaskState.completed)
        out = b"".join(self.client.file.get_from_task("with-certs", "list", "stdout.txt")).decode().split()
        self.assertEqual(out, [f"sha1-{thumbprint}.pfx", f"sha1-{thumbprint}.pfx.pw", "pfxpass", "600"])
        # Visible to tasks only: the start task's directory has none.
        self.assertEqual(self.node_text("certs", node.id, "startup/stdout.txt").strip(), "0")
        listed = {f.name for f in self.client.file.list_from_task("with-certs", "list")}
        self.assertTrue({"certs", "wd", "stdout.txt", "stderr.txt"} <= listed, listed)

    def test_node_layout_and_task_defaults(self):
        self.pool("layout")
        node = self.only_node("layout")
        top = {f.name: f for f in self.client.file.list_from_compute_node("layout", node.id)}
        self.assertTrue({"applications", "fsmounts", "shared", "startup", "volatile", "workitems"} <= set(top), set(top))
        self.assertIsNone(top["shared"].properties)  # a directory shows no properties
        self.job("defaults", "layout")
        self.task("defaults", "missing", "no-such-program --flag")
        task = self.state_of("defaults", "missing", bm.TaskState.completed)
        self.assertEqual((task.required_slots, task.user_identity.auto_user.scope, task.user_identity.auto_user.elevation_level),
                         (1, bm.AutoUserScope.pool, bm.ElevationLevel.non_admin))
        self.assertEqual(task.constraints.max_wall_clock_time.days, 10675199)
        self.assertEqual((task.execution_info.failure_info.code, task.execution_info.failure_info.details[0].name),
                         ("CommandProgramNotFound", "Message"))
        self.assertEqual(task.node_info.node_url, f"{self.url}/pools/layout/nodes/{node.id}")
        self.assertEqual(task.node_info.task_root_directory_url,
                         f"{self.url}/pools/layout/nodes/{node.id}/files/workitems/defaults/job-1/missing")
        # Its logs are there although the program never started.
        files = {f.name: f for f in self.client.file.list_from_task("defaults", "missing")}
        self.assertEqual((files["stdout.txt"].properties.content_length, files["stdout.txt"].properties.content_type), (0, "text/plain"))
        self.assertIn("stderr.txt", files)

    def test_service_logs_are_uploaded_to_a_container(self):
        self.pool("logs", start_task=bm.StartTask(command_line="/bin/sh -c 'echo started'", wait_for_success=True))
        node = self.only_node("logs")
        blobs = BlobServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
        blobs.create_container("nodelogs")
        sas = generate_container_sas(harness.DEV_ACCOUNT, "nodelogs", account_key=harness.DEV_KEY,
                                     permission=ContainerSasPermissions(write=True, create=True),
                                     expiry=datetime.utcnow() + timedelta(hours=1))
        url = f"{self.emu.endpoints['blob']}/{harness.DEV_ACCOUNT}/nodelogs?{sas}"
        result = self.client.compute_node.upload_batch_service_logs("logs", node.id, bm.UploadBatchServiceLogsConfiguration(
            container_url=url, start_time=datetime.utcnow() - timedelta(hours=1)))
        self.assertEqual(result.number_of_files_uploaded, 3)
        self.assertRegex(result.virtual_directory_name, rf"^batch-[0-9A-F]{{16}}/logs/{node.id}/[0-9a-f-]{{36}}$")
        names = sorted(b.name for b in blobs.get_container_client("nodelogs").list_blobs())
        self.assertEqual(names, [f"{result.virtual_directory_name}/{n}" for n in ("agent.log", "startup/stderr.txt", "startup/stdout.txt")])
        out = blobs.get_blob_client("nodelogs", f"{result.virtual_directory_name}/startup/stdout.txt").download_blob().readall()
        self.assertEqual(out, b"started\n")
        # Logs changed before startTime are not sent; a host off this machine is never reached (the
        # service answers before it uploads: the answer is the same).
        later = self.client.compute_node.upload_batch_service_logs("logs", node.id, bm.UploadBatchServiceLogsConfiguration(
            container_url="https://test.blob.core.windows.net/c?sv=x", start_time=datetime.utcnow() + timedelta(hours=1)))
        self.assertEqual(later.number_of_files_uploaded, 1)
        r = self.raw("POST", f"/pools/logs/nodes/{node.id}/uploadbatchservicelogs", {"containerUrl": url})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredProperty"))
        self.assertIn({"key": "PropertyName", "value": "startTime"}, r.json()["values"])

    def test_files_come_from_and_go_to_this_machine_only(self):
        self.pool("offsite")
        self.job("offsite", "offsite")
        self.task("offsite", "fetch", "/bin/true", resource_files=[bm.ResourceFile(http_url="https://example.com/data.bin")])
        task = self.state_of("offsite", "fetch", bm.TaskState.completed)
        self.assertEqual(task.execution_info.failure_info.code, "ResourceContainerAccessDenied")
        self.assertIn("loopback", task.execution_info.failure_info.message)


if __name__ == "__main__":
    import unittest
    unittest.main()
