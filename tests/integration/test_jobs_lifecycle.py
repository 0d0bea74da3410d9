"""Job and cluster life through the SDK: terminate and delete in every state, maxWallClockTime,
priorities and gang scheduling, setup tasks, manual resize with each deallocation option,
pre-emption of low-priority nodes, auto-scale from 0 to 1 and back, requeue after a restart, and
what a job shows once it has run (its size, cores, node hours, the diagnosis archive)."""
import io
import os
import signal
import time
import unittest
import urllib.request
import zipfile

import requests
from azure.mgmt.batchai import models as m

import harness
from jobs_fixture import JobsTestCase, RG, WS, EXP, DONE

SLEEPER = "echo $$ > $AZ_BATCHAI_OUTPUT_OUT/pid; exec sleep 600"


def alive(pid):
    """Running (a zombie is not); the process may be reaped between the two looks."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


class LifecycleTest(JobsTestCase):
    def sleeper(self, name, cluster, **extra):
        job = self.job(name, cluster, wait=False, custom_toolkit_settings=m.CustomToolkitSettings(command_line=SLEEPER), **extra)
        self.wait_job(name, states=("running",))
        pid = harness.wait_for(lambda: "pid" in self.files(name, "OUT") and self.read(name, "pid", "OUT").strip(),
                               what=f"{name}'s pid")
        return job, int(pid)

    def test_terminate_in_every_state(self):
        cluster = self.cluster("term", nodes=1)
        self.wait_cluster("term", idle=1)
        _, pid = self.sleeper("t-running", cluster)
        self.job("t-queued", cluster, wait=False, custom_toolkit_settings=m.CustomToolkitSettings(command_line="true"))
        self.assertEqual(self.client.jobs.get(RG, WS, EXP, "t-queued").execution_state, "queued")

        self.client.jobs.begin_terminate(RG, WS, EXP, "t-queued").result()
        queued = self.client.jobs.get(RG, WS, EXP, "t-queued")
        self.assertEqual(queued.execution_state, "failed")
        self.assertEqual(queued.execution_info.errors[0].code, "JobTerminated")

        self.client.jobs.begin_terminate(RG, WS, EXP, "t-running").result()
        running = self.wait_job("t-running")
        self.assertEqual(running.execution_state, "failed")
        self.assertIsNone(running.execution_info.exit_code)
        self.assertEqual(running.execution_info.errors[0].code, "JobTerminated")
        harness.wait_for(lambda: not alive(pid), what="the terminated job's process to end")

        done = self.job("t-done", cluster, custom_toolkit_settings=m.CustomToolkitSettings(command_line="true"))
        self.assertEqual(done.execution_state, "succeeded")
        self.client.jobs.begin_terminate(RG, WS, EXP, "t-done").result()
        after = self.client.jobs.get(RG, WS, EXP, "t-done")
        self.assertEqual((after.execution_state, after.execution_info.exit_code), ("succeeded", 0))
        self.wait_cluster("term", idle=1)

    def test_a_job_that_ran_shows_its_size_cores_and_node_hours_and_leaves_a_diagnosis_archive(self):
        cluster = self.cluster("ran", nodes=1, vm_size="STANDARD_D2")
        self.wait_cluster("ran", idle=1)
        path = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/{RG}/providers/Microsoft.BatchAI/workspaces/{WS}/experiments/{EXP}/jobs"
        # Queued behind a job that holds the only node: no cores yet, no size (as recorded, 2021).
        _, pid = self.sleeper("holder", cluster)
        self.job("ran", cluster, wait=False, custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 0.1; echo ran"))
        queued = harness.arm_call(self.endpoints, "GET", f"{path}/ran").json()["properties"]
        self.assertEqual((queued["executionState"], queued["coreCountPerNode"]), ("queued", 0))
        self.assertNotIn("vmSize", queued)
        self.assertEqual(queued["constraints"]["maxAttempts"], 5)
        self.client.jobs.begin_terminate(RG, WS, EXP, "holder").result()
        harness.wait_for(lambda: not alive(pid), what="the holder's process to end")
        self.assertEqual(self.wait_job("ran").execution_state, "succeeded")
        done = harness.arm_call(self.endpoints, "GET", f"{path}/ran").json()["properties"]
        self.assertEqual((done["vmSize"], done["coreCountPerNode"]), ("STANDARD_D2", 2))
        hours = done["executionInfo"]["totalJobNodeHours"]
        self.assertIsInstance(hours, float)
        self.assertTrue(0 < hours < 0.1, hours)
        listed = [f for f in harness.arm_call(self.endpoints, "GET", f"{path}/ran/listOutputFiles?outputdirectoryid=stdouterr").json()["value"]]
        archives = [f for f in listed if f["name"].startswith("diagnosis-tvmps_")]
        self.assertEqual(len(archives), 1, [f["name"] for f in listed])
        self.assertRegex(archives[0]["name"], r"^diagnosis-tvmps_[0-9a-f]{64}_d\.zip$")
        with urllib.request.urlopen(archives[0]["downloadUrl"], timeout=10) as r:
            archive = zipfile.ZipFile(io.BytesIO(r.read()))
        self.assertIsNone(archive.testzip())
        self.assertIn("execution.log", archive.namelist())
        self.assertIn("succeeded", archive.read("execution.log").decode())
        self.assertEqual(archive.read("stdout.txt"), b"ran\n")
        # Every job of a cluster gets the same archive name (the cloud's named the cluster's pool).
        self.job("ran2", cluster, custom_toolkit_settings=m.CustomToolkitSettings(command_line="true"))
        self.assertIn(archives[0]["name"], self.files("ran2"))

    def test_delete_in_every_state_kills_the_running_processes(self):
        cluster = self.cluster("del", nodes=1)
        self.wait_cluster("del", idle=1)
        _, pid = self.sleeper("d-running", cluster)
        self.job("d-queued", cluster, wait=False, custom_toolkit_settings=m.CustomToolkitSettings(command_line="true"))
        self.client.jobs.begin_delete(RG, WS, EXP, "d-running").result()
        harness.wait_for(lambda: not alive(pid), what="the deleted job's process to end")
        # The node is free again: the queued job runs, then goes too.
        self.assertEqual(self.wait_job("d-queued").execution_state, "succeeded")
        self.client.jobs.begin_delete(RG, WS, EXP, "d-queued").result()
        names = [j.name for j in self.client.jobs.list_by_experiment(RG, WS, EXP)]
        self.assertNotIn("d-running", names)
        self.assertNotIn("d-queued", names)
        self.wait_cluster("del", idle=1)

    def test_max_wall_clock_time_fails_the_job(self):
        cluster = self.cluster("wall", nodes=1)
        self.wait_cluster("wall", idle=1)
        job = self.job("slow", cluster, constraints=m.JobBasePropertiesConstraints(max_wall_clock_time="PT1S"),
                       custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 600"))
        self.assertEqual(job.execution_state, "failed")
        self.assertEqual(job.execution_info.errors[0].code, "MaxWallClockTimeExceeded")
        self.assertIn("PT1S", job.execution_info.errors[0].message)
        self.assertIsNone(job.execution_info.exit_code)

    def test_priority_then_arrival_and_gang_scheduling(self):
        cluster = self.cluster("prio", nodes=2)
        self.wait_cluster("prio", idle=2)
        gate = "while [ ! -e $AZ_BATCHAI_MOUNT_ROOT/afs/open-prio ]; do sleep 0.05; done"
        self.job("blocker", cluster, wait=False, node_count=2, custom_toolkit_settings=m.CustomToolkitSettings(command_line=gate))
        self.wait_job("blocker", states=("running",))
        stamp = "date +%s.%N > $AZ_BATCHAI_OUTPUT_OUT/at; sleep 0.2"
        for name, priority in (("low", "low"), ("normal1", "normal"), ("high", "high"), ("normal2", "normal")):
            # Two nodes each: they run one at a time, in queue order.
            self.job(name, cluster, wait=False, scheduling_priority=priority, node_count=2,
                     custom_toolkit_settings=m.CustomToolkitSettings(command_line=stamp))
        self.job("giant", cluster, wait=False, node_count=3,
                 custom_toolkit_settings=m.CustomToolkitSettings(command_line="true"))
        self.share.get_file_client("open-prio").upload_file(b"")
        started = {}
        for name in ("low", "normal1", "high", "normal2"):
            self.assertEqual(self.wait_job(name).execution_state, "succeeded")
            started[name] = float(self.read(name, "at", "OUT"))
        order = sorted(started, key=started.get)
        self.assertEqual(order[0], "high")
        self.assertLess(started["normal1"], started["normal2"])
        self.assertEqual(order[-1], "low")
        self.assertEqual(self.client.jobs.get(RG, WS, EXP, "giant").execution_state, "queued")
        self.client.jobs.begin_delete(RG, WS, EXP, "giant").result()

    def test_setup_task_runs_on_each_node_and_a_failure_makes_it_unusable(self):
        self.cluster("setup-ok", nodes=2, vm_size="STANDARD_D1", setup=m.SetupTask(
            command_line="echo set up on $AZ_BATCHAI_NUM_GPUS GPU; echo $MY_SETUP",
            environment_variables=[m.EnvironmentVariable(name="MY_SETUP", value="yes")],
            std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs"))
        self.wait_cluster("setup-ok", idle=2)
        suffix = self.client.clusters.get(RG, WS, "setup-ok").node_setup.setup_task.std_out_err_path_suffix
        node_ids = [n["nodeId"] for n in self.nodes() if n["cluster"].endswith("/clusters/setup-ok")]
        directory = self.share.get_directory_client(suffix)
        names = {f["name"] for f in directory.list_directories_and_files()}
        for node in node_ids:
            self.assertIn(f"stdout-{node}.txt", names)
            self.assertIn(f"stderr-{node}.txt", names)
            body = self.share.get_file_client(f"{suffix}/stdout-{node}.txt").download_file().readall()
            self.assertEqual(body, b"set up on 0 GPU\nyes\n")

        self.cluster("setup-bad", nodes=1, vm_size="STANDARD_D1", setup=m.SetupTask(command_line="exit 4", std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs"))
        bad = harness.wait_for(lambda: (lambda c: c if c.node_state_counts.unusable_node_count == 1 else None)(
            self.client.clusters.get(RG, WS, "setup-bad")), what="an unusable node")
        self.assertEqual([e.code for e in bad.errors], ["SetupTaskFailed"])
        self.assertIn("exit code 4", bad.errors[0].message)
        self.assertEqual(bad.allocation_state, "steady")

    def test_a_share_url_that_names_no_share_is_taken_and_fails_to_mount(self):
        # The service took any azureFileUrl at create (202) and its nodes failed to mount it.
        volumes = m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
            account_name=harness.DEV_ACCOUNT, azure_file_url="dummy_uri", relative_mount_path="afs",
            credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY))])
        created = self.cluster("dummy-url", nodes=1, vm_size="STANDARD_D1", volumes=volumes)
        self.assertEqual(created.provisioning_state, "succeeded")
        self.assertEqual(created.node_setup.mount_volumes.azure_file_shares[0].azure_file_url, "dummy_uri")
        bad = harness.wait_for(lambda: (lambda c: c if c.node_state_counts.unusable_node_count == 1 else None)(
            self.client.clusters.get(RG, WS, "dummy-url")), what="an unusable node")
        self.assertEqual([e.code for e in bad.errors], ["MountFailed"])
        self.assertIn('"dummy_uri" is not the URL of an Azure Files share', bad.errors[0].message)
        self.client.clusters.begin_delete(RG, WS, "dummy-url").result()

    def test_manual_resize_with_each_deallocation_option(self):
        for option, expected in (("requeue", "queued"), ("terminate", "failed"), ("waitforjobcompletion", "succeeded")):
            with self.subTest(option):
                name = "rs-" + option[:4]
                cluster = self.cluster(name, nodes=1, deallocation=option)
                self.wait_cluster(name, idle=1)
                gate = f"while [ ! -e $AZ_BATCHAI_MOUNT_ROOT/afs/open-{name} ]; do sleep 0.05; done"
                self.job(name + "-job", cluster, wait=False, custom_toolkit_settings=m.CustomToolkitSettings(command_line=gate))
                self.wait_job(name + "-job", states=("running",))
                self.client.clusters.update(RG, WS, name, m.ClusterUpdateParameters(scale_settings=m.ScaleSettings(
                    manual=m.ManualScaleSettings(target_node_count=0, node_deallocation_option=option))))
                if option == "waitforjobcompletion":
                    time.sleep(0.3)  # the node keeps running its job
                    self.assertEqual(self.client.jobs.get(RG, WS, EXP, name + "-job").execution_state, "running")
                    self.share.get_file_client(f"open-{name}").upload_file(b"")
                job = self.wait_job(name + "-job", states=(expected,))
                if option == "terminate":
                    self.assertEqual(job.execution_info.errors[0].code, "NodeDeallocated")
                self.wait_cluster(name, current=0)

    def test_low_priority_preemption_requeues_the_job(self):
        cluster = self.cluster("lowpri", nodes=1, priority="lowpriority")
        self.wait_cluster("lowpri", idle=1)
        self.job("pre", cluster, wait=False, custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 600"))
        self.wait_job("pre", states=("running",))
        node = next(n for n in self.nodes() if n["cluster"].endswith("/clusters/lowpri"))
        r = requests.post(f"{self.endpoints['arm']}/emulator/nodes/{node['nodeId']}/preempt", verify=self.endpoints["ca_cert"])
        self.assertEqual(r.status_code, 200, r.text)
        self.assertTrue(r.json()["requeuedJob"].endswith("/jobs/pre"))
        # Requeued, then run again on the node that replaces the pre-empted one.
        harness.wait_for(lambda: any(n["cluster"].endswith("/clusters/lowpri") and n["nodeId"] != node["nodeId"]
                                     and n["state"] == "running" for n in self.nodes()), what="the job on a new node")
        self.assertEqual(self.client.jobs.get(RG, WS, EXP, "pre").execution_state, "running")
        self.client.jobs.begin_delete(RG, WS, EXP, "pre").result()

        dedicated = self.cluster("dedicated", nodes=1)
        self.wait_cluster("dedicated", idle=1)
        other = next(n for n in self.nodes() if n["cluster"].endswith("/clusters/dedicated"))
        r = requests.post(f"{self.endpoints['arm']}/emulator/nodes/{other['nodeId']}/preempt", verify=self.endpoints["ca_cert"])
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (400, "NodeNotLowPriority"))
        r = requests.post(f"{self.endpoints['arm']}/emulator/nodes/tvm-none/preempt", verify=self.endpoints["ca_cert"])
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (404, "NodeNotFound"))

    def test_auto_scale_from_zero_to_one_and_back(self):
        cluster = self.cluster("auto", auto=m.AutoScaleSettings(minimum_node_count=0, maximum_node_count=2))
        self.wait_cluster("auto", current=0)
        job = self.job("scaled", cluster, custom_toolkit_settings=m.CustomToolkitSettings(command_line="echo up"))
        self.assertEqual(job.execution_state, "succeeded")
        # --autoscale-idle 300 ms: then back to the minimum.
        self.wait_cluster("auto", current=0)


class StrictGpusTest(JobsTestCase):
    emulator_args = ["--gpus", "fake:1", "--strict-gpus", "--lro-delay", "0"]

    def test_nodes_without_their_gpus_are_not_allocated(self):
        self.cluster("nc6", nodes=2, vm_size="STANDARD_NC6")
        nc6 = self.wait_cluster("nc6", current=1)
        self.assertEqual(nc6.node_state_counts.idle_node_count, 1)
        self.assertEqual([e.code for e in nc6.errors], ["InsufficientGpus"])
        self.assertIn("--strict-gpus: 1 node(s) of Standard_NC6 are not allocated", nc6.errors[0].message)
        self.cluster("nc12", nodes=1, vm_size="STANDARD_NC12")
        # (At 0 nodes from the start: steady at once, before the engine has tried and said why.)
        nc12 = harness.wait_for(lambda: (lambda c: c if c.errors else None)(self.wait_cluster("nc12", current=0)),
                                timeout=60, interval=0.05, what="nc12's error")
        self.assertEqual(nc12.errors[0].code, "InsufficientGpus")
        self.cluster("cpu", nodes=2, vm_size="STANDARD_D1")
        self.assertIsNone(self.wait_cluster("cpu", idle=2).errors)


class RestartTest(unittest.TestCase):
    def test_running_jobs_are_requeued_and_run_again_after_a_restart(self):
        emu = harness.Emulator(args=["--lro-delay", "0"])
        sleeper = harness.sleep_of_this_run(6002)  # the first run's process outlives the killed emulator
        try:
            emu.start()
            ep = emu.endpoints
            sub = harness.SUBSCRIPTION
            provider = f"/subscriptions/{sub}/resourceGroups/rg/providers/Microsoft.BatchAI"
            harness.arm_call(ep, "PUT", f"/subscriptions/{sub}/resourcegroups/rg", {"location": "eastus"}, api_version="2021-04-01")
            harness.arm_call(ep, "PUT", f"{provider}/workspaces/ws", {"location": "eastus"})
            harness.arm_call(ep, "PUT", f"{provider}/workspaces/ws/experiments/e")
            harness.wait_for_operation(ep, harness.arm_call(ep, "PUT", f"{provider}/workspaces/ws/clusters/c", {"properties": {
                "vmSize": "STANDARD_D1", "scaleSettings": {"manual": {"targetNodeCount": 1}},
                "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"}}}))
            marker = os.path.join(emu.location, "ran-once")
            command = f"if [ -e {marker} ]; then echo second; else touch {marker}; exec {sleeper}; fi"
            harness.wait_for_operation(ep, harness.arm_call(ep, "PUT", f"{provider}/workspaces/ws/experiments/e/jobs/j", {"properties": {
                "cluster": {"id": f"{provider}/workspaces/ws/clusters/c"}, "nodeCount": 1,
                "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP", "customToolkitSettings": {"commandLine": command}}}))
            state = lambda: harness.arm_call(ep, "GET", f"{provider}/workspaces/ws/experiments/e/jobs/j").json()["properties"]
            harness.wait_for(lambda: state()["executionState"] == "running" and os.path.exists(marker), what="the first run")
            emu.send(signal.SIGKILL)
            emu.process.wait()
            emu.start()
            ep = emu.endpoints
            final = harness.wait_for(lambda: (lambda p: p if p["executionState"] in DONE else None)(state()),
                                     timeout=30, what="the requeued run")
            self.assertEqual(final["executionState"], "succeeded")
            self.assertEqual(final["executionInfo"]["exitCode"], 0)
            with open(os.path.join(emu.location, "emulator.log")) as log:
                self.assertIn("was running when the emulator stopped: requeued", log.read())
        finally:
            emu.stop()
            emu.close()
            harness.kill_processes_named(sleeper)


if __name__ == "__main__":
    unittest.main()
