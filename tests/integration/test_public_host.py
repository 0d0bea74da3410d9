"""--public-host: the name clients reach the emulator by where it is not the address it listens
on (a CI service's alias). Here the name is 127.0.0.9, an address of loopback on which the
emulator does not listen (it listens on 127.0.0.1): what follows a handed-out URL as given fails,
what the emulator maps to its own endpoint works, and no name is looked up anywhere.

The handed-out URLs (endpoints.json, /emulator/endpoints, ARM's views of storage accounts) name
it, ARM's certificate covers it, and a Batch task's resource files named by that URL are fetched
from the Blob endpoint where it listens. The name reached for real, through a container's alias,
is test_container_image's."""
import json
import ssl
import unittest
import urllib.request
from datetime import datetime, timedelta

from azure.batch import BatchServiceClient
from azure.batch import models as bm
from azure.batch.batch_auth import SharedKeyCredentials
from azure.storage.blob import BlobServiceClient, generate_container_sas

import harness
from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY

PUBLIC = "127.0.0.9"


def on_loopback(url):
    """`url` with the public name replaced by the address the emulator listens on."""
    return url.replace(f"//{PUBLIC}:", "//127.0.0.1:", 1)


class PublicHost(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=["--public-host", PUBLIC]).start()
        with open(cls.emu.location + "/endpoints.json") as f:
            cls.published = json.load(f)
        # What the tests use to reach it: the same ports on 127.0.0.1.
        cls.local = {k: on_loopback(v) if isinstance(v, str) else v for k, v in cls.published.items()}

    @classmethod
    def tearDownClass(cls):
        cls.emu.close()

    def test_the_urls_handed_out_name_the_public_host(self):
        for name in ("arm", "blob", "file", "batch", "proxy"):
            self.assertIn(f"://{PUBLIC}:", self.published[name], name)
        context = ssl.create_default_context(cafile=self.published["ca_cert"])
        context.check_hostname = False  # reached on 127.0.0.1; the names it covers are checked below
        with urllib.request.urlopen(self.local["arm"] + "/emulator/endpoints", timeout=10, context=context) as r:
            self.assertEqual(json.load(r)["blob"], self.published["blob"])
        # The emulator listens where it did: not on the public address itself.
        with self.assertRaises(OSError):
            urllib.request.urlopen(self.published["blob"] + "/health", timeout=5)

    def test_the_certificate_covers_the_public_host(self):
        from cryptography import x509
        with open(self.published["ca_cert"], "rb") as f:
            cert = x509.load_pem_x509_certificate(f.read())
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        addresses = {str(a) for a in names.get_values_for_type(x509.IPAddress)}
        self.assertIn(PUBLIC, addresses)
        self.assertIn("127.0.0.1", addresses)

    def test_a_tasks_resource_files_named_by_the_public_url_are_fetched_here(self):
        blobs = BlobServiceClient.from_connection_string(harness.connection_string(self.local))
        blobs.create_container("input")
        blobs.get_blob_client("input", "data/numbers.txt").upload_blob(b"1 2 3\n")
        sas = generate_container_sas(harness.DEV_ACCOUNT, "input", account_key=harness.DEV_KEY, permission="rl",
                                     expiry=datetime.utcnow() + timedelta(hours=1))
        # As a client in the service's network writes it: the public name.
        container_url = f"{self.published['blob']}/{harness.DEV_ACCOUNT}/input?{sas}"
        client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=self.local["batch"])
        client.pool.add(bm.PoolAddParameter(
            id="p", vm_size="STANDARD_D1_V2", target_dedicated_nodes=1,
            virtual_machine_configuration=bm.VirtualMachineConfiguration(
                image_reference=bm.ImageReference(publisher="canonical", offer="0001-com-ubuntu-server-focal",
                                                  sku="20_04-lts"),
                node_agent_sku_id="batch.node.ubuntu 20.04")))
        client.job.add(bm.JobAddParameter(id="j", pool_info=bm.PoolInformation(pool_id="p")))
        client.task.add("j", bm.TaskAddParameter(
            id="t", command_line="/bin/sh -c 'cat data/numbers.txt'",
            resource_files=[bm.ResourceFile(storage_container_url=container_url, blob_prefix="data/")]))

        def completed():
            task = client.task.get("j", "t")
            return task if task.state == bm.TaskState.completed else None
        task = harness.wait_for(completed, timeout=60, what="the task to complete")
        failure = task.execution_info.failure_info
        self.assertIsNone(failure, failure and failure.message)
        self.assertEqual(task.execution_info.exit_code, 0)
        stdout = b"".join(client.file.get_from_task("j", "t", "stdout.txt")).decode()
        self.assertEqual(stdout, "1 2 3\n")


if __name__ == "__main__":
    unittest.main()
