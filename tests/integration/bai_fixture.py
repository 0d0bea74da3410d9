"""What the bai integration tests share: an emulator, and a way to run bai against it as a user
would (the endpoint from the environment, a private config directory and HOME)."""
import json
import os
import shutil
import tempfile
import unittest

import harness


class BaiTestCase(unittest.TestCase):
    emulator_args = ["--gpus", "fake:4", "--lro-delay", "0", "--autoscale-idle", "300"]
    emulator_env = None

    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=cls.emulator_args, env=cls.emulator_env).start()
        cls.endpoints = cls.emu.endpoints
        cls.home = tempfile.mkdtemp(prefix="bai-home-")
        cls.env = {"BATCHAI_EMULATOR_ENDPOINT": cls.endpoints["arm"],
                   "BATCHAI_EMULATOR_CA_CERT": cls.endpoints["ca_cert"],
                   "BAI_CONFIG_DIR": os.path.join(cls.home, ".bai"), "HOME": cls.home,
                   "AZURE_BATCHAI_STORAGE_ACCOUNT": "", "AZURE_BATCHAI_STORAGE_KEY": ""}

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        shutil.rmtree(cls.home, ignore_errors=True)
        assert code == 0, f"emulator exited with {code}"

    def bai(self, *args, ok=True, env=None, timeout=120):
        """Runs bai; with ok, asserts it succeeded. Returns the CompletedProcess."""
        result = harness.run_cli(*args, env=dict(self.env, **(env or {})), timeout=timeout)
        if ok:
            self.assertEqual(result.returncode, 0, f"bai {' '.join(args)}:\n{result.stdout}\n{result.stderr}")
        return result

    def bai_json(self, *args, **kwargs):
        return json.loads(self.bai(*args, "-o", "json", **kwargs).stdout)

    def write(self, name, content):
        path = os.path.join(self.home, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content, indent=2))
        return path
