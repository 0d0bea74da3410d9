"""The real Azure clients, pointed at an emulator. Each imports its SDK when asked for."""
from .emulator import (CLIENT_ID, CLIENT_SECRET, DEV_BATCH_ACCOUNT, DEV_BATCH_KEY, SUBSCRIPTION)


def credential(endpoints):
    """azure-identity's ClientSecretCredential for the well-known service principal, signing in
    at the emulator's own authority (ARM/adfs): signed tokens, as --strict-auth requires."""
    from azure.identity import ClientSecretCredential
    return ClientSecretCredential("adfs", CLIENT_ID, CLIENT_SECRET, authority=endpoints["arm"],
                                  connection_verify=endpoints["ca_cert"] or False)


def batchai_management(endpoints, token_credential, **kwargs):
    """azure-mgmt-batchai's client (the class is BatchAI in the SDK's newer releases,
    BatchAIManagementClient in older ones), trusting the emulator's certificate."""
    import azure.mgmt.batchai as sdk
    client_class = getattr(sdk, "BatchAI", None) or getattr(sdk, "BatchAIManagementClient")
    kwargs.setdefault("polling_interval", 0.1)
    return client_class(token_credential, SUBSCRIPTION, base_url=endpoints["arm"],
                        connection_verify=endpoints["ca_cert"] or False, **kwargs)


def resource_management(endpoints, token_credential, **kwargs):
    """azure-mgmt-resource's client, for the resource groups that Batch AI's resources live in."""
    from azure.mgmt.resource import ResourceManagementClient
    kwargs.setdefault("polling_interval", 0.1)
    return ResourceManagementClient(token_credential, SUBSCRIPTION, base_url=endpoints["arm"],
                                    connection_verify=endpoints["ca_cert"] or False, **kwargs)


def blob_service(connection_string):
    from azure.storage.blob import BlobServiceClient
    return BlobServiceClient.from_connection_string(connection_string)


def share_service(connection_string):
    from azure.storage.fileshare import ShareServiceClient
    return ShareServiceClient.from_connection_string(connection_string)


def batch_service(endpoints):
    from azure.batch import BatchServiceClient
    from azure.batch.batch_auth import SharedKeyCredentials
    return BatchServiceClient(SharedKeyCredentials(DEV_BATCH_ACCOUNT, DEV_BATCH_KEY), batch_url=endpoints["batch"])
