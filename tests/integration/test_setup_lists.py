"""tools/setup's lists: what tools/run installs is what running needs, nothing the tests alone need."""
import os
import subprocess
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SETUP = os.path.join(ROOT, "tools", "setup")

# What only the tests use: browsers, Slurm, a docker engine, sanitizers, the Azure clients (a user
# brings their own az), test frameworks.
TEST_ONLY = {"chromium", "chromium-driver", "python3-selenium", "slurm-wlm", "munge", "python3-mpi4py",
             "docker.io", "docker-registry", "busybox-static", "python3-bcrypt", "debootstrap", "clang", "lld",
             "libclang-rt-14-dev", "azure-cli", "python3-azure", "python3-requests", "python3-pytest",
             "libgtest-dev", "libgmock-dev"}


def listed(which):
    result = subprocess.run([SETUP, "--list", which], capture_output=True, text=True, check=True)
    return result.stdout.split()


class SetupLists(unittest.TestCase):
    def test_the_run_time_list_names_no_test_only_package(self):
        run = listed("run")
        self.assertIn("fuse3", run)
        self.assertIn("openmpi-bin", run)
        self.assertIn("bubblewrap", run)
        self.assertEqual(sorted(TEST_ONLY & set(run)), [])
        self.assertEqual(sorted(set(listed("test")) & set(run)), [], "a package in both lists")
        self.assertLessEqual(TEST_ONLY, set(listed("test")))

    def test_run_installs_the_run_time_list_and_test_the_rest(self):
        with open(os.path.join(ROOT, "tools", "run")) as f:
            run = f.read()
        with open(os.path.join(ROOT, "tools", "test")) as f:
            test = f.read()
        self.assertRegex(run, r'"\$root/tools/setup"\n')
        self.assertIn('"$root/tools/setup" --test', test)
        # The run-time list comes without the packages' recommendations (manual pages, image codecs).
        with open(SETUP) as f:
            self.assertRegex(f.read(), r'apt-get install -y -q --no-install-recommends "\$\{run_missing\[@\]\}"')
        # tools/run builds named targets, not every test binary.
        self.assertRegex(run, r"tools/build\" \"\$root/build\" --target batchai-emulator bai ")

    def test_usage(self):
        self.assertEqual(subprocess.run([SETUP, "--list", "bogus"], capture_output=True).returncode, 2)
        self.assertEqual(subprocess.run([SETUP, "--frobnicate"], capture_output=True).returncode, 2)


if __name__ == "__main__":
    unittest.main()
