"""The benchmarks' own programs (load generators, reference servers): left out of the default
build, which the tests wait for, and built here on first use."""
import os
import subprocess


def tool(build, name):
    """The path of build/tools/NAME, built first if it is not there or is out of date."""
    subprocess.run(["cmake", "--build", build, "--target", name], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(build, "tools", name)
