"""pytest plugin for the Batch AI emulator (README.md beside this package).

Registered by the `pytest11` entry point when installed; with PYTHONPATH, load it with
`-p pytest_batchai` (or `pytest_plugins = ["pytest_batchai"]` in the top conftest.py)."""
import os

import pytest

from . import clients
from .emulator import ENDPOINTS_VARIABLE, Emulator
from .scenarios import ScenarioFile

__all__ = ["Emulator"]


def pytest_addoption(parser):
    group = parser.getgroup("batchai", "Batch AI emulator")
    group.addoption("--batchai-seed", dest="batchai_seed", type=int, default=None,
                    help="the seed of every *.scenario replay (the replay's own default otherwise)")


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".scenario":
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


@pytest.fixture(scope="session")
def batchai_emulator():
    """The session's emulator: the one $BATCHAI_EMULATOR_ENDPOINTS names (an endpoints.json, a
    data directory or an ARM URL), else a new one on ephemeral ports with a fresh data directory,
    stopped when the session ends."""
    named = os.environ.get(ENDPOINTS_VARIABLE)
    if named:
        yield Emulator.attach(named)
        return
    emulator = Emulator.start()
    yield emulator
    code = emulator.stop()
    assert code == 0, f"batchai-emulator exited with {code}"


@pytest.fixture(scope="session")
def batchai_endpoints(batchai_emulator):
    """{"arm", "blob", "file", "batch", "ca_cert"}: URLs and the PEM that ARM's HTTPS needs."""
    return batchai_emulator.endpoints


@pytest.fixture(scope="session")
def batchai_connection_string(batchai_emulator):
    """The storage connection string of the well-known account devstoreaccount1."""
    return batchai_emulator.connection_string


@pytest.fixture(scope="session")
def batchai_credential(batchai_endpoints):
    """A TokenCredential that signs in at the emulator's authority."""
    return clients.credential(batchai_endpoints)


@pytest.fixture(scope="session")
def batchai_mgmt_client(batchai_endpoints, batchai_credential):
    """azure-mgmt-batchai's management client on the default subscription."""
    return clients.batchai_management(batchai_endpoints, batchai_credential)


@pytest.fixture(scope="session")
def batchai_resource_client(batchai_endpoints, batchai_credential):
    """azure-mgmt-resource's client: resource groups (Batch AI's resources need one)."""
    return clients.resource_management(batchai_endpoints, batchai_credential)


@pytest.fixture(scope="session")
def batchai_blob_client(batchai_connection_string):
    return clients.blob_service(batchai_connection_string)


@pytest.fixture(scope="session")
def batchai_share_client(batchai_connection_string):
    return clients.share_service(batchai_connection_string)


@pytest.fixture(scope="session")
def batchai_batch_client(batchai_endpoints):
    """azure-batch's client of the well-known Batch account devbatchaccount1."""
    return clients.batch_service(batchai_endpoints)
