"""az extension batchai-flat: the first Batch AI releases' `az batchai` lines (resources directly
in a group, no workspace: api-version 2017-09-01-preview) against the emulator.

A thin layer: each command hands its command line, as typed, to `bai`, which implements the
commands (tools/bai: "The flat preview commands"), pointed at the cloud az is signed in to. The
extension only declares the flags, so that az's parser takes the line. `bai az-login` installs it.

The module's own commands stay the module's: the extension takes a module command over only on a
line that names no workspace (no -w, no --ids), where the module would refuse it for want of one,
and never for -h; and the few that az 2.45's module lacks or fails in on every line (REPAIRED)."""
import json
import os
import shutil
import subprocess
import sys

from azure.cli.core import AzCommandsLoader
from azure.cli.core.commands import CliCommandType

GROUP = ["--resource-group", "-g"]
LOCATION = ["--location", "-l"]
STORAGE = [("storage_account_name", ["--storage-account-name"]), ("storage_account_key", ["--storage-account-key"]),
           ("afs_name", ["--afs-name"]), ("afs_mount_path", ["--afs-mount-path"]), ("bfs_name", ["--bfs-name"]),
           ("bfs_mount_path", ["--bfs-mount-path"]), ("nfs", ["--nfs", "--nfs-name"]),
           ("nfs_mount_path", ["--nfs-mount-path"])]
NAME = [("name", ["--name", "-n"])]
YES = [("yes", ["--yes", "-y"], "flag")]

# The flags of each command: (dest, options[, "flag"]). bai checks what is required and each value.
TAKEN_OVER = {
    "cluster create": NAME + STORAGE + [
        ("config", ["--config", "-c", "--config-file", "-f"]), ("vm_size", ["--vm-size", "-s"]),
        ("image", ["--image", "-i"]), ("min_nodes", ["--min"]), ("max_nodes", ["--max"]), ("target", ["--target", "-t"]),
        ("vm_priority", ["--vm-priority"]), ("user_name", ["--user-name", "-u"]), ("password", ["--password", "-p"]),
        ("ssh_key", ["--ssh-key", "-k"]), ("generate_ssh_keys", ["--generate-ssh-keys"], "flag"),
        ("setup_task", ["--setup-task"]), ("setup_task_output", ["--setup-task-output"]), ("subnet", ["--subnet"])],
    "cluster list": [],
    "cluster show": NAME,
    "cluster delete": NAME + YES,
    "job create": NAME + STORAGE[:6] + [("cluster_name", ["--cluster-name", "-r", "--cluster", "-c"]),
                                        ("config", ["--config", "--config-file", "-f"])],
    "job list": [],
    "job show": NAME,
    "job delete": NAME + YES,
}
# The first releases' commands that the module no longer has.
FLAT_ONLY = {
    "cluster list-nodes": NAME,
    "job list-nodes": NAME,
    "job list-files": NAME + [("output_directory_id", ["--output-directory-id", "-d"]), ("path", ["--path", "-p"]),
                              ("expiry", ["--expiry"])],
    "job stream-file": [("job_name", ["--job-name", "-j"]), ("output_directory_id", ["--output-directory-id", "-d"]),
                        ("file_name", ["--name", "-n", "--file-name", "-f"]), ("path", ["--path", "-p"])],
}
# Commands that az 2.45's module lacks or fails in (on every line, workspace or not): auto-scale
# and file-server create end in a TypeError/AttributeError (its SDK's update() wants `parameters`,
# its file_servers have no get), file-server show and delete are commented out of it.
WORKSPACE = [("workspace", ["--workspace", "-w"])]
REPAIRED = {
    "cluster auto-scale": NAME + WORKSPACE + [("min_nodes", ["--min"]), ("max_nodes", ["--max"])],
    "file-server create": NAME + WORKSPACE + [
        ("config", ["--config-file", "-f"]), ("vm_size", ["--vm-size", "-s"]), ("disk_count", ["--disk-count"]),
        ("disk_size", ["--disk-size"]), ("storage_sku", ["--storage-sku"]), ("caching_type", ["--caching-type"]),
        ("user_name", ["--user-name", "-u"]), ("password", ["--password", "-p"]), ("ssh_key", ["--ssh-key", "-k"]),
        ("generate_ssh_keys", ["--generate-ssh-keys"], "flag"), ("subnet", ["--subnet"])],
    "file-server show": NAME + WORKSPACE,
    "file-server delete": NAME + WORKSPACE + YES,
}
# `job wait --interval N`: the module sleeps on the string N (a TypeError); without it, it works.
INTERVAL_WAIT = {"job wait": NAME + WORKSPACE + [("experiment", ["--experiment", "-e"]), ("interval", ["--interval"])]}
# az's own flags that bai does not take (az has handled them before the command runs).
AZ_ONLY_FLAGS = {"--debug", "--verbose", "--only-show-errors"}


def names_a_workspace(args):
    return any(a in ("-w", "--workspace", "--ids") or a.startswith(("--workspace=", "--ids=")) for a in args)


def commands_for(args):
    """The commands this invocation gets from the extension (all of them when az builds its index)."""
    args = list(args or [])
    commands = dict(FLAT_ONLY, **REPAIRED)
    if "-h" in args or "--help" in args:
        return commands
    if "--interval" in args or not args:
        commands.update(INTERVAL_WAIT)
    if not names_a_workspace(args):
        commands.update(TAKEN_OVER)
    return commands


def bai_program():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(here, "installed.json")) as f:
            program = json.load(f).get("bai")
        if program and os.access(program, os.X_OK):
            return program
    except (OSError, ValueError):
        pass
    return shutil.which("bai")


def forward(cmd, **flags):  # pylint: disable=unused-argument
    """Runs bai with the line as typed (less az's own flags), in az's cloud and subscription;
    bai prints as az prints. Exits with bai's status."""
    from azure.cli.core.commands.client_factory import get_subscription_id
    from knack.util import CLIError
    program = bai_program()
    if not program:
        raise CLIError("bai is not found: run `bai az-login` again, or put bai on PATH")
    line = list(getattr(cmd.loader, "batchai_flat_args", None) or sys.argv[1:])
    line = line[line.index("batchai") + 1:] if "batchai" in line else line
    line = [a for a in line if a not in AZ_ONLY_FLAGS]
    scope = ["--endpoint", cmd.cli_ctx.cloud.endpoints.resource_manager.rstrip("/")]
    if os.environ.get("REQUESTS_CA_BUNDLE"):
        scope += ["--ca-cert", os.environ["REQUESTS_CA_BUNDLE"]]
    if "--subscription" not in line:
        scope += ["--subscription", get_subscription_id(cmd.cli_ctx)]
    if "-o" not in line and "--output" not in line:
        scope += ["-o", cmd.cli_ctx.invocation.data.get("output") or "json"]
    sys.stdout.flush()
    code = subprocess.run([program, *scope, *line], check=False).returncode
    if code != 0:
        sys.exit(code)


class BatchAIFlatLoader(AzCommandsLoader):
    def __init__(self, cli_ctx=None):
        super().__init__(cli_ctx=cli_ctx,
                         custom_command_type=CliCommandType(operations_tmpl="azext_batchai_flat#{}"))
        self.batchai_flat_args = None
        self.batchai_flat_commands = {}

    def load_command_table(self, args):
        self.batchai_flat_args = list(args or [])
        self.batchai_flat_commands = commands_for(args)
        for name in self.batchai_flat_commands:
            group, verb = name.rsplit(" ", 1)
            with self.command_group("batchai " + group) as g:
                g.custom_command(verb, "forward")
        return self.command_table

    def load_arguments(self, command):
        for name, flags in self.batchai_flat_commands.items():
            with self.argument_context("batchai " + name) as c:
                c.ignore("flags")  # the handler's **flags: what the flags below fill, read from the line
                c.extra("resource_group_name", options_list=GROUP, configured_default="group",
                        help="Name of resource group. You can configure the default group using "
                             "`az configure --defaults group=<name>`.")
                c.extra("location", options_list=LOCATION, help="Location (default: the group's).")
                for flag in flags:
                    dest, options = flag[0], flag[1]
                    kind = {"action": "store_true"} if flag[2:] == ("flag",) else {}
                    c.extra(dest, options_list=options, help="As in the first az batchai releases (see bai).", **kind)


COMMAND_LOADER_CLS = BatchAIFlatLoader
