"""What a CI job's tests look like with the plugin: one emulator for the session, real clients."""
from azure.batch import models as batch
from azure.mgmt.batchai import models as batchai


def test_a_blob_round_trip(batchai_blob_client):
    container = batchai_blob_client.create_container("example-data")
    container.upload_blob("hello.txt", b"hello, emulator")
    assert container.download_blob("hello.txt").readall() == b"hello, emulator"
    container.delete_container()


def test_a_file_share(batchai_share_client):
    share = batchai_share_client.create_share("example-share")
    share.get_file_client("notes.txt").upload_file(b"kept on a share")
    assert [f["name"] for f in share.list_directories_and_files()] == ["notes.txt"]
    share.delete_share()


def test_a_workspace_through_azure_mgmt_batchai(batchai_resource_client, batchai_mgmt_client):
    batchai_resource_client.resource_groups.create_or_update("example-rg", {"location": "eastus"})
    workspace = batchai_mgmt_client.workspaces.begin_create(
        "example-rg", "example-ws", batchai.WorkspaceCreateParameters(location="eastus")).result()
    assert workspace.provisioning_state == "succeeded"
    assert "example-ws" in [w.name for w in batchai_mgmt_client.workspaces.list()]


def test_a_batch_pool(batchai_batch_client):
    batchai_batch_client.pool.add(batch.PoolAddParameter(
        id="example-pool", vm_size="STANDARD_D2_V3",
        virtual_machine_configuration=batch.VirtualMachineConfiguration(
            image_reference=batch.ImageReference(publisher="microsoft-azure-batch", offer="ubuntu-server-container",
                                                 sku="20-04-lts", version="latest"),
            node_agent_sku_id="batch.node.ubuntu 20.04")))
    assert "example-pool" in [p.id for p in batchai_batch_client.pool.list()]
