"""An emulator on the test Slurm cluster with --slurm-storage rest, as the Slurm suites start one:
its data directory hidden on every host (an empty tmpfs there: the hosts' own disk), its File
endpoint on 127.0.0.1, which the hosts reach only through a relay on the cluster's bridge (a
site's proxy) named by --slurm-file-endpoint; a workspace and an experiment made, shares `out`
(holding given.txt) and `scratch`. Everything is undone by the test's cleanups."""
import socket

from azure.mgmt.batchai import BatchAI
from azure.mgmt.batchai import models as m
from azure.mgmt.resource import ResourceManagementClient
from azure.storage.fileshare import ShareServiceClient

import harness
from tcp_relay import TcpRelay

GIVEN = b"put through REST"


def share(name, path):
    """A file share of the dev account as a job's or cluster's volume at `path`."""
    return m.AzureFileShareReference(
        account_name=harness.DEV_ACCOUNT, azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/{name}",
        credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path=path)


class RestEmulator:
    def __init__(self, test, cluster, size_map, rg, ws, exp, env=None, args=()):
        self.relay = TcpRelay(cluster.bridge_address)
        test.addCleanup(self.relay.close)
        with socket.create_server(("127.0.0.1", 0)) as probe:
            file_port = probe.getsockname()[1]
        self.relay.target = ("127.0.0.1", file_port)
        self.emu = harness.Emulator(env=dict(cluster.env(), **(env or {})), args=[
            "--file-port", str(file_port), "--slurm-file-endpoint", f"http://{cluster.bridge_address}:{self.relay.port}",
            "--lro-delay", "0", "--gpus", "none", "--compute", "slurm", "--slurm-partition", "main",
            "--slurm-size-map", size_map, "--slurm-storage", "rest"] + list(args)).start()
        test.addCleanup(self.emu.close)
        cluster.hide_on_hosts(self.emu.location)
        test.addCleanup(cluster.show_on_hosts, self.emu.location)
        harness.arm_client(ResourceManagementClient, self.emu.endpoints).resource_groups.create_or_update(
            rg, {"location": "eastus"})
        self.client = harness.arm_client(BatchAI, self.emu.endpoints)
        self.client.workspaces.begin_create(rg, ws, m.WorkspaceCreateParameters(location="eastus")).result()
        self.client.experiments.begin_create(rg, ws, exp).result()
        shares = ShareServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
        self.out, self.scratch = shares.create_share("out"), shares.create_share("scratch")
        self.out.get_file_client("given.txt").upload_file(GIVEN)

    def read(self, path):
        """A file of the share `out`, as text."""
        return self.out.get_file_client(path).download_file().readall().decode()
