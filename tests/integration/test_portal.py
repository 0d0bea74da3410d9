"""The portal in a real browser (Debian's chromium, headless, through chromedriver and selenium):
each page drawn from a running emulator, a job followed from queued to succeeded without a
reload, values shown as text (a hostile command line never runs as markup), the portal's own
endpoints refusing bad input like the APIs, a scenario report (replay --report) drawn from its
file, and the page noticing that the emulator stopped.
Screenshots of each page go to $BAI_TEST_OUTPUT (default: a temporary directory)."""
import os
import shutil
import subprocess
import tempfile
import unittest
import urllib.parse

import requests
from azure.batch import BatchServiceClient
from azure.batch import models as bm
from azure.batch.batch_auth import SharedKeyCredentials
from azure.core.exceptions import ResourceNotFoundError
from azure.mgmt.batchai import BatchAI
from azure.mgmt.batchai import models as m
from azure.mgmt.resource import ResourceManagementClient
from azure.storage.blob import BlobServiceClient
from azure.storage.fileshare import ShareServiceClient

import harness

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
except ImportError:  # the reason is printed by the skip below
    webdriver = None

RG, WS, EXP = "rg-portal", "ws", "exp"
HOSTILE = "<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">"


@unittest.skipUnless(webdriver and CHROMIUM and DRIVER,
                     "SKIPPED: needs chromium, chromium-driver and python3-selenium (tools/setup --test installs them)")
class PortalTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.output = os.environ.get("BAI_TEST_OUTPUT") or tempfile.mkdtemp(prefix="bai-portal-shots-")
        os.makedirs(cls.output, exist_ok=True)
        cls.emu = harness.Emulator(args=["--lro-delay", "0", "--gpus", "none"]).start()
        cls.arm = cls.emu.endpoints["arm"]
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--ignore-certificate-errors", "--window-size=1280,900", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking"):
            options.add_argument(flag)
        cls.browser = webdriver.Chrome(service=Service(DRIVER), options=options)
        cls.browser.set_page_load_timeout(30)

    @classmethod
    def tearDownClass(cls):
        cls.browser.quit()
        if cls.emu.process:
            cls.emu.stop()
        cls.emu.close()

    # ---- helpers ----

    def open(self, hash_):
        self.browser.get(f"{self.arm}/portal/{hash_}")

    def eventually(self, condition, what, timeout=30):
        return harness.wait_for(condition, timeout=timeout, interval=0.1, what=what)

    # Read in one script: the page redraws every two seconds, and an element found by one command
    # may be replaced before the next reads it.
    def text_of(self, css):
        return self.browser.execute_script("const e = document.querySelector(arguments[0]); return e ? e.innerText : null;", css)

    def attribute_of(self, css, name):
        return self.browser.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;", css, name)

    def click(self, link_text):
        self.browser.execute_script(
            "const a = [...document.querySelectorAll('a')].find((a) => a.textContent === arguments[0]); a.click();", link_text)

    def shot(self, name):
        self.browser.save_screenshot(os.path.join(self.output, f"portal-{name}.png"))

    def batchai(self):
        client = harness.arm_client(BatchAI, self.emu.endpoints)
        harness.arm_client(ResourceManagementClient, self.emu.endpoints).resource_groups.create_or_update(
            RG, {"location": "eastus"})
        client.workspaces.begin_create(RG, WS, m.WorkspaceCreateParameters(location="eastus")).result()
        client.experiments.begin_create(RG, WS, EXP).result()
        return client

    # ---- tests (in name order: the last one stops the emulator) ----

    def test_1_overview_shows_endpoints_accounts_and_counts(self):
        self.open("#/")
        self.eventually(lambda: self.text_of("#version"), "the overview")
        page = self.browser.find_element(By.TAG_NAME, "main").text
        self.assertIn(self.arm, page)
        self.assertIn(self.emu.endpoints["blob"], page)
        self.assertIn(harness.DEV_ACCOUNT, page)
        self.assertIn(harness.DEV_KEY, page)
        self.assertEqual(self.text_of("[data-count='job']"), "0")
        self.assertIn("live", self.text_of("#status"))
        self.assertEqual(self.browser.execute_script("return document.title"), "Batch AI Emulator")
        # The key's copy button: on the clipboard, or selected for a Ctrl+C where the browser refuses.
        self.press("button[data-copy='key']")
        self.eventually(lambda: self.browser.execute_script(
            "const b = document.querySelector(\"button[data-copy='key']\"); return b && b.dataset.done;"), "the copy")
        done = self.browser.execute_script("return document.querySelector(\"button[data-copy='key']\").dataset.done")
        if done != "copied":
            self.assertEqual(self.browser.execute_script("return getSelection().toString()"), harness.DEV_KEY)
        self.shot("overview")

    def test_2_a_job_goes_from_queued_to_succeeded_without_a_reload(self):
        client = self.batchai()
        client.clusters.begin_create(RG, WS, "gpu", m.ClusterCreateParameters(
            vm_size="STANDARD_NC6", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        self.open("#/resources?type=job")
        self.eventually(lambda: self.text_of("#shown") == "0-0 of 0", "the empty job list")
        self.browser.execute_script("window.marker = 'same page'")
        client.jobs.begin_create(RG, WS, EXP, "followed", m.JobCreateParameters(
            cluster=m.ResourceId(id=client.clusters.get(RG, WS, "gpu").id), node_count=1,
            std_out_err_path_prefix="$AZ_BATCHAI_JOB_TEMP",
            custom_toolkit_settings=m.CustomToolkitSettings(
                command_line="sleep 3; echo '" + HOSTILE + "'; ln -s /etc/passwd \"$AZ_BATCHAI_STDOUTERR_DIR/leak.txt\""))).result()
        states = set()

        def state():
            seen = self.attribute_of("tr[data-name='followed'] [data-state]", "data-state")
            if seen:
                states.add(seen)
            return "succeeded" in states
        self.eventually(lambda: state() or "failed" in states, "the job's state in the list", timeout=60)
        self.assertNotIn("failed", states)
        self.assertIn("running", states, f"seen: {states}")
        self.assertEqual(self.browser.execute_script("return window.marker"), "same page")  # no reload
        self.shot("jobs")
        # Its page: the document, the command line as text.
        self.click("followed")
        self.eventually(lambda: self.text_of("#document"), "the job's page")
        document = self.text_of("#document")
        self.assertIn("<script>window.pwned = 1</script>", document)  # (the JSON escapes its quotes)
        self.assertIn("<img src=x onerror=", document)
        self.assertIsNone(self.browser.execute_script("return window.pwned === undefined ? null : window.pwned"))
        self.assertNotIn("Pw-123456", self.browser.page_source)
        # Its times and exit code, and its states over time (queued, ran on the node, ended).
        self.eventually(lambda: self.text_of("tr[data-field='exit code'] td") == "0", "the exit code")
        self.assertTrue(self.text_of("tr[data-field='ended'] td"))
        events = self.browser.execute_script("return [...document.querySelectorAll('tr[data-event]')].map((r) => r.dataset.event)")
        self.assertEqual(events, ["queued", "runs", "ends"])
        self.assertIn("succeeded (exit code 0)", self.text_of("tr[data-event='ends']"))
        self.shot("job")
        # Its stdout on the node's own disk ($AZ_BATCHAI_JOB_TEMP), read there; the link the job made
        # beside it is neither shown nor followed.
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-file='stdout.txt']"), "stdout.txt")
        self.assertFalse(self.browser.find_elements(By.CSS_SELECTOR, "tr[data-file='leak.txt']"))
        job_id = harness.arm_client(BatchAI, self.emu.endpoints).jobs.get(RG, WS, EXP, "followed").id
        r = requests.get(f"{self.arm}/portal/api/job-file", params={"id": job_id, "path": "leak.txt"}, verify=False, timeout=10)
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (404, "FileNotFound"))  # found, and refused
        self.assertNotIn("root:", r.text)
        self.click("stdout.txt")
        self.eventually(lambda: (self.text_of("#log") or "").strip() == HOSTILE, "the node-local stdout as text")
        self.assertIsNone(self.browser.execute_script("return window.pwned === undefined ? null : window.pwned"))
        # The tree: the group opened, then its workspace, then its experiment, which holds the job.
        self.open("#/tree")
        for kind, name in [("resourceGroup", RG), ("workspace", WS), ("experiment", EXP)]:
            self.press(f"details[data-tree$='/{name}'] > summary")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "details[data-tree$='/jobs/followed']"), "the job in the tree")
        self.shot("tree")
        # The experiment's page lists the jobs it holds.
        self.open("#/resource?id=" + urllib.parse.quote(job_id.rsplit("/jobs/", 1)[0], safe=""))
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "[data-children='job'] tr[data-name='followed']"),
                        "the experiment's jobs")
        # Filters: by state and by search, through the form.
        self.open("#/resources?type=job")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "form.filters"), "the form")
        self.browser.find_element(By.NAME, "state").send_keys("failed")
        self.browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
        self.eventually(lambda: "state=failed" in self.browser.current_url and self.text_of("#shown") == "0-0 of 0",
                        "the failed jobs (none)")
        Select(self.browser.find_element(By.NAME, "type")).select_by_value("cluster")
        self.browser.find_element(By.NAME, "state").clear()
        self.browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-name='gpu']"), "the cluster")
        self.shot("clusters")
        # The cluster's page: its node (the job has ended: idle), by state in the bar and the table.
        self.click("gpu")
        node_id = client.clusters.list_remote_login_information(RG, WS, "gpu").next().node_id
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, f"tr[data-node='{node_id}']"),
                        "the cluster's node")
        self.assertEqual(self.text_of(f"tr[data-node='{node_id}'] [data-state]"), "idle")
        self.assertEqual(self.text_of(f"tr[data-node='{node_id}'] [data-host]"), "this machine")  # no Slurm host
        self.assertEqual(self.text_of("#node-states [data-node-state='idle']"), "idle 1")
        self.shot("cluster")

    def test_2_b_a_jobs_log_is_followed_as_it_grows(self):
        client = self.batchai()
        ShareServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints)).create_share("logs")
        volumes = m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
            account_name=harness.DEV_ACCOUNT, azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/logs",
            credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path="afs")])
        client.clusters.begin_create(RG, WS, "withshare", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            node_setup=m.NodeSetup(mount_volumes=volumes),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        job = client.jobs.begin_create(RG, WS, EXP, "talker", m.JobCreateParameters(
            cluster=m.ResourceId(id=client.clusters.get(RG, WS, "withshare").id), node_count=1,
            std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            output_directories=[m.OutputDirectory(id="MODEL", path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs")],
            custom_toolkit_settings=m.CustomToolkitSettings(
                command_line="mkdir -p $AZ_BATCHAI_OUTPUT_MODEL/ckpt && echo weights > $AZ_BATCHAI_OUTPUT_MODEL/ckpt/w.txt; "
                             "for i in 1 2 3 4 5 6; do echo line-$i; sleep 1; done; echo 'caf\u00e9 <done>'"))).result()
        self.open("#/resource?id=" + urllib.parse.quote(job.id, safe=""))
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-file='stdout.txt']"),
                        "stdout.txt among the job's output files")
        self.click("stdout.txt")
        seen = []

        def log():
            text = self.text_of("#log")
            if text is not None and (not seen or seen[-1] != text):
                seen.append(text)
            return text is not None and "<done>" in text
        self.eventually(log, "the whole log", timeout=60)
        self.assertTrue(any("line-1" in t and "line-6" not in t for t in seen), f"never partial: {seen}")
        self.assertEqual(seen[-1].split("\n")[:6], [f"line-{i}" for i in range(1, 7)])
        self.assertIn("caf\u00e9 <done>", seen[-1])  # UTF-8 and markup characters, as text
        self.shot("output")
        # The job's other output directory, as a browser: a folder opened, a file downloaded.
        self.open("#/resource?id=" + urllib.parse.quote(job.id, safe=""))
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "#output-directories a"), "the directories")
        self.click("MODEL")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-file='ckpt']"), "the MODEL directory")
        self.click("ckpt/")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-file='ckpt/w.txt']"), "ckpt/")
        href = self.attribute_of("tr[data-file='ckpt/w.txt'] a[download]", "href")
        self.assertEqual(requests.get(href, timeout=10).content, b"weights\n")
        self.shot("output-directory")

    def press(self, css):
        """Clicks what `css` finds (through the browser, as a user would), again if a redraw
        replaced it in between."""
        def attempt():
            try:
                self.browser.find_element(By.CSS_SELECTOR, css).click()
                return True
            except (StaleElementReferenceException, NoSuchElementException):
                return False
        self.eventually(attempt, f"pressing {css}")

    def confirm(self, key):
        self.press(f"button[data-action='{key}']")
        self.eventually(lambda: (self.text_of(f"button[data-action='{key}']") or "").startswith("Confirm"),
                        f"{key} asking for its confirmation")
        self.press(f"button[data-action='{key}']")

    def engine_nodes(self):
        return requests.get(f"{self.arm}/emulator/nodes", verify=False, timeout=10).json()["value"]

    def test_2_c_a_node_pre_empted_a_job_terminated_a_cluster_resized_from_the_pages(self):
        client = self.batchai()
        cluster = client.clusters.begin_create(RG, WS, "lowpri", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", vm_priority="lowpriority",
            scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        job = client.jobs.begin_create(RG, WS, EXP, "long", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_JOB_TEMP",
            custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 120"))).result()

        def running_on():
            found = [n["nodeId"] for n in self.engine_nodes() if (n.get("job") or "").lower() == job.id.lower()]
            return found[0] if found else None
        first = self.eventually(running_on, "the job running")
        # Pre-empted from the cluster's page: the node leaves, the job is requeued onto a new one.
        self.open("#/resource?id=" + urllib.parse.quote(cluster.id, safe=""))
        self.confirm(f"preempt:{first}")
        second = self.eventually(lambda: (lambda n: n if n and n != first else None)(running_on()),
                                 "the job requeued onto another node", timeout=60)
        self.assertNotIn(first, [n["nodeId"] for n in self.engine_nodes()])
        self.assertNotEqual(second, first)
        self.eventually(lambda: "preempt: done" in (self.text_of("#action-result") or ""), "the action's answer")
        # The timeline: the job's run on the first node ended requeued, the pre-emption marked, its
        # run on the second node still open.
        def bars():
            return self.browser.execute_script(
                "return [...document.querySelectorAll('svg#timeline rect.job')].map((r) => [r.dataset.job, r.dataset.end])")
        self.eventually(lambda: sorted(end for j, end in bars() if j.lower() == job.id.lower()) ==
                        ["requeued: preempted", "running"], "the requeued run and the open one")
        self.assertEqual(self.browser.execute_script(
            "return [...document.querySelectorAll('svg#timeline [data-mark]')].map((m) => m.dataset.mark)"), ["preempted"])
        self.shot("timeline")
        # Terminated from the job's page.
        self.open("#/resource?id=" + urllib.parse.quote(job.id, safe=""))
        self.confirm(f"terminate:{job.id}")
        self.eventually(lambda: client.jobs.get(RG, WS, EXP, "long").execution_state in ("failed", "succeeded"),
                        "the job terminated", timeout=60)
        def ends():
            return self.browser.execute_script(
                "return [...document.querySelectorAll('tr[data-event=ends] td:nth-child(3)')].map((td) => td.innerText)")
        self.eventually(lambda: ends() == ["requeued: preempted", "stopped: terminate"], "the job's two ends")
        # The idle node failed from the cluster's page: unusable, as the scenario fault leaves it.
        self.open("#/resource?id=" + urllib.parse.quote(cluster.id, safe=""))
        self.confirm(f"fail:{second}")
        self.eventually(lambda: [n["state"] for n in self.engine_nodes() if n["nodeId"] == second] == ["unusable"],
                        "the node unusable")
        # Resized to 0 from the cluster's page.
        self.open("#/resource?id=" + urllib.parse.quote(cluster.id, safe=""))
        self.eventually(lambda: self.browser.find_elements(By.NAME, "nodes"), "the resize field")
        field = self.browser.find_element(By.NAME, "nodes")
        field.clear()
        field.send_keys("0")
        self.press("button[data-action='resize']")
        self.eventually(lambda: client.clusters.get(RG, WS, "lowpri").current_node_count == 0, "the cluster at 0 nodes",
                        timeout=60)
        self.shot("actions")

    def test_2_d_the_storage_browser_lists_and_downloads(self):
        conn = harness.connection_string(self.emu.endpoints)
        container = BlobServiceClient.from_connection_string(conn).create_container("browse")
        odd = "<img src=x onerror=window.pwned=3>.txt"  # (no '/': it would make a folder)
        container.upload_blob(odd, b"odd name")
        container.upload_blob("dir/inner.txt", b"inner bytes")
        share = ShareServiceClient.from_connection_string(conn).create_share("browse-share")
        share.create_directory("sub")
        share.get_file_client("sub/readme.txt").upload_file(b"read me")
        self.open("#/storage")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-container='browse']"), "the container")
        self.click("browse")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-blob='dir/']"), "the blob list")
        self.assertEqual(self.text_of(f"tr[data-blob='{odd}'] td"), odd)  # as text
        self.assertEqual(self.browser.execute_script("return document.querySelectorAll('main img').length"), 0)
        self.assertIsNone(self.browser.execute_script("return window.pwned === undefined ? null : window.pwned"))
        self.click("dir/")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-blob='dir/inner.txt']"), "the folder")
        href = self.attribute_of("tr[data-blob='dir/inner.txt'] a[download]", "href")
        self.assertTrue(href.startswith(self.emu.endpoints["blob"]), href)
        self.assertEqual(requests.get(href, timeout=10).content, b"inner bytes")  # signed for reading
        self.shot("blobs")
        self.open("#/storage")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-share='browse-share']"), "the share")
        self.click("browse-share")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-file='sub']"), "the share's top")
        self.click("sub/")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-file='sub/readme.txt']"), "sub/")
        href = self.attribute_of("tr[data-file='sub/readme.txt'] a[download]", "href")
        self.assertEqual(requests.get(href, timeout=10).content, b"read me")
        self.shot("files")

    def upload_from_the_page(self, name, data):
        path = os.path.join(tempfile.mkdtemp(prefix="bai-portal-upload-"), name)
        with open(path, "wb") as f:
            f.write(data)
        self.eventually(lambda: self.browser.find_elements(By.NAME, "upload"), "the upload form")
        self.browser.find_element(By.NAME, "upload").send_keys(path)
        self.press("button[data-action='upload']")

    def test_2_e_a_file_uploaded_its_metadata_edited_and_deleted_from_the_pages(self):
        conn = harness.connection_string(self.emu.endpoints)
        container = BlobServiceClient.from_connection_string(conn).get_container_client("browse")
        data = bytes(range(256)) * 1000  # binary, 256,000 bytes
        # A blob uploaded into a folder of the container, through the page.
        self.open("#/storage/blobs?account=devstoreaccount1&container=browse&prefix=dir%2F")
        self.upload_from_the_page("weights.bin", data)
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-blob='dir/weights.bin']"),
                        "the uploaded blob in the list")
        blob = container.get_blob_client("dir/weights.bin")
        self.assertEqual(blob.download_blob().readall(), data)
        href = self.attribute_of("tr[data-blob='dir/weights.bin'] a[download]", "href")
        self.assertEqual(requests.get(href, timeout=10).content, data)  # and downloaded through the page's link
        # Its page: properties; metadata saved from the page, seen by the SDK.
        self.click("weights.bin")
        self.eventually(lambda: self.text_of("tr[data-property='size'] td") == "256000 bytes", "the blob's properties")
        self.assertEqual(self.text_of("tr[data-property='blob type'] td"), "BlockBlob")
        self.assertEqual(self.text_of("tr[data-property='ETag'] td"), blob.get_blob_properties().etag)
        field = self.browser.find_element(By.NAME, "metadata")
        field.clear()
        field.send_keys("owner=team-a\nstage=raw")
        self.press("button[data-action='metadata']")
        self.eventually(lambda: blob.get_blob_properties().metadata == {"owner": "team-a", "stage": "raw"},
                        "the metadata through the SDK")
        self.eventually(lambda: self.text_of("tr[data-metadata='owner'] td:nth-child(2)") == "team-a", "the metadata shown")
        self.shot("blob-properties")
        # Deleted from its page (a second click confirms): gone for the SDK, back to the folder.
        self.confirm("delete:account=devstoreaccount1&container=browse&name=dir%2Fweights.bin")
        self.eventually(lambda: not blob.exists(), "the blob deleted")
        self.eventually(lambda: "prefix=dir%2F" in self.browser.current_url, "back in the folder")
        # A file uploaded into a share's directory, read back through the SDK; then deleted.
        self.open("#/storage/files?account=devstoreaccount1&share=browse-share&path=sub")
        self.upload_from_the_page("notes.txt", "caf\u00e9 notes\n".encode())
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-file='sub/notes.txt']"),
                        "the uploaded file in the list")
        file = ShareServiceClient.from_connection_string(conn).get_share_client("browse-share").get_file_client("sub/notes.txt")
        self.assertEqual(file.download_file().readall(), "caf\u00e9 notes\n".encode())
        self.assertEqual(file.get_file_properties().content_settings.content_type, "text/plain")
        self.click("notes.txt")
        self.eventually(lambda: self.text_of("tr[data-property='size'] td") == "12 bytes", "the file's properties")
        self.confirm("delete:account=devstoreaccount1&share=browse-share&path=sub%2Fnotes.txt")
        def gone():
            try:
                file.get_file_properties()
                return False
            except ResourceNotFoundError:
                return True
        self.eventually(gone, "the file deleted")

    def test_2_f_azure_batch_pools_nodes_jobs_and_tasks(self):
        batch = BatchServiceClient(SharedKeyCredentials(harness.DEV_BATCH_ACCOUNT, harness.DEV_BATCH_KEY),
                                   batch_url=self.emu.endpoints["batch"])
        batch.pool.add(bm.PoolAddParameter(
            id="portal-pool", vm_size="STANDARD_D1", target_dedicated_nodes=1,
            virtual_machine_configuration=bm.VirtualMachineConfiguration(
                image_reference=bm.ImageReference(publisher="canonical", offer="0001-com-ubuntu-server-focal",
                                                  sku="20_04-lts", version="latest"),
                node_agent_sku_id="batch.node.ubuntu 20.04"),
            start_task=bm.StartTask(command_line="/bin/sh -c 'echo set up'", wait_for_success=True)))
        batch.job.add(bm.JobAddParameter(id="portal-job", pool_info=bm.PoolInformation(pool_id="portal-pool")))
        batch.task.add("portal-job", bm.TaskAddParameter(id="hello", command_line="/bin/sh -c \"echo 'hello <b>batch</b>'\""))
        batch.task.add("portal-job", bm.TaskAddParameter(
            id="flaky", command_line="/bin/sh -c 'exit 3'", constraints=bm.TaskConstraints(max_task_retry_count=1)))
        self.open("#/batch")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-pool='portal-pool']"), "the pool")
        self.eventually(lambda: self.browser.find_elements(By.CSS_SELECTOR, "tr[data-batch-job='portal-job']"), "the job")
        self.shot("batch")
        # The pool's node, its start task completed with exit code 0, its output.
        self.click("portal-pool")
        self.eventually(lambda: self.attribute_of("tr[data-node] [data-start-task]", "data-start-task") == "completed",
                        "the node's start task completed", timeout=60)
        self.assertIn("exit code 0", self.text_of("tr[data-node] [data-start-task]"))
        self.click("stdout")
        self.eventually(lambda: (self.text_of("#log") or "").strip() == "set up", "the start task's stdout")
        self.shot("batch-pool")
        # The job's tasks: exit codes, retries; a task's stdout as text.
        self.open("#/batch/job?account=devbatchaccount1&job=portal-job")
        self.eventually(lambda: self.attribute_of("tr[data-task='flaky'] [data-exit-code]", "data-exit-code") == "3" and
                        self.attribute_of("tr[data-task='flaky'] [data-state]", "data-state") == "completed",
                        "the flaky task's end", timeout=60)
        self.assertEqual(self.attribute_of("tr[data-task='flaky'] [data-retries]", "data-retries"), "1")
        self.assertEqual(self.attribute_of("tr[data-task='flaky'] [data-requeues]", "data-requeues"), "0")
        self.eventually(lambda: self.attribute_of("tr[data-task='hello'] [data-exit-code]", "data-exit-code") == "0",
                        "the hello task's end", timeout=60)
        self.shot("batch-job")
        self.click("hello")
        self.eventually(lambda: self.text_of("pre[data-output='stdout.txt']") == "hello <b>batch</b>\n", "the task's stdout")
        self.assertEqual(self.browser.execute_script("return document.querySelectorAll('main b').length"), 0)
        self.shot("batch-task")

    def test_3_the_portals_endpoints_refuse_bad_input_naming_it(self):
        def get(path):
            return requests.get(f"{self.arm}{path}", verify=False, timeout=10)
        PortalTest.job_id = harness.arm_client(BatchAI, self.emu.endpoints).jobs.get(RG, WS, EXP, "talker").id
        for path, status, named in [
            ("/portal/api/resources?type=nope", 400, "type"),
            ("/portal/api/resources?type=job&top=5000", 400, "top"),
            ("/portal/api/resources?type=job&skip=-1", 400, "skip"),
            ("/portal/api/resources?type=job&q=" + "x" * 300, 400, "q"),
            ("/portal/api/resource", 400, "id"),
            ("/portal/api/resource?id=" + urllib.parse.quote("/subscriptions/x/nothing"), 404, "/subscriptions/x/nothing"),
            ("/portal/nothing-here", 404, "/portal/nothing-here"),
            ("/portal/api/job-file?path=stdout.txt", 400, "id"),
            ("/portal/api/storage/volumes?account=nope", 404, "nope"),
            ("/portal/api/storage/blobs?account=devstoreaccount1&container=missing", 404, "container"),
            ("/portal/api/storage/blobs?account=devstoreaccount1&container=browse&prefix=" + "p" * 2000, 400, "prefix"),
            ("/portal/api/storage/files?account=devstoreaccount1&share=missing", 404, "share"),
            ("/portal/api/job-file?id=" + urllib.parse.quote("/subscriptions/x/jobs/none") + "&path=a", 404,
             "/subscriptions/x/jobs/none"),
            ("/portal/api/job-files?id=" + urllib.parse.quote(self.job_id) + "&dir=nope", 400, "nope"),
            ("/portal/api/job-file?id=" + urllib.parse.quote(self.job_id), 400, "path"),
            ("/portal/api/job-file?id=" + urllib.parse.quote(self.job_id) + "&path=stdout.txt&from=-1", 400, "from"),
            ("/portal/api/job-file?id=" + urllib.parse.quote(self.job_id) + "&path=../../../etc/passwd", 400,
             "directory"),
            ("/portal/api/storage/properties?account=devstoreaccount1&container=browse", 400, "name"),
            ("/portal/api/storage/properties?account=devstoreaccount1&container=browse&share=s&name=a", 400, "share"),
            ("/portal/api/storage/properties?account=devstoreaccount1&container=browse&name=missing", 404, "blob"),
            ("/portal/api/batch/read?account=nope&path=/pools", 404, "nope"),
            ("/portal/api/batch/read?account=devbatchaccount1&path=/certificates", 400, "path"),
            ("/portal/api/batch/read?account=devbatchaccount1&path=/jobs/portal-job/tasks/hello/files/../../x", 400, "path"),
            ("/portal/api/batch/read?account=devbatchaccount1&path=/pools/absent", 404, "pool"),
        ]:
            r = get(path)
            self.assertEqual(r.status_code, status, path)
            self.assertIn(named, r.json()["error"]["message"], path)
        # Actions: only with the page's token, only from the page's origin, only known ones.
        token = get("/portal/api/session").json()["token"]
        act = lambda body, **headers: requests.post(f"{self.arm}/portal/api/actions", json=body, headers=headers,  # noqa: E731
                                                    verify=False, timeout=10)
        cluster_id = harness.arm_client(BatchAI, self.emu.endpoints).clusters.get(RG, WS, "gpu").id
        resize = {"action": "resize", "id": cluster_id, "nodes": 0}
        r = act(resize)
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (403, "PortalTokenMissing"))
        r = act(resize, **{"X-Portal-Token": "guessed"})
        self.assertEqual(r.status_code, 403)
        r = act(resize, **{"X-Portal-Token": token, "Origin": "https://evil.example"})
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (403, "CrossOriginAction"))
        for body, named in [({"action": "launch", "id": cluster_id}, "action"),
                            ({"action": "resize", "id": cluster_id, "nodes": -1}, "nodes"),
                            ({"action": "resize", "id": cluster_id, "nodes": "2"}, "nodes"),
                            ({"action": "terminate", "id": cluster_id}, "id"),
                            ({"action": "preempt", "node": 7}, "node"),
                            ({"action": "preempt", "node": "ghost"}, "ghost")]:
            r = act(body, **{"X-Portal-Token": token})
            self.assertIn(r.status_code, (400, 404), body)
            self.assertIn(named, r.json()["error"]["message"], body)
        r = requests.post(f"{self.arm}/portal/api/actions", data="not json", verify=False, timeout=10,
                          headers={"X-Portal-Token": token})
        self.assertEqual(r.status_code, 400)
        r = act({"action": "fail-node", "node": "ghost"}, **{"X-Portal-Token": token})
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (404, "NodeNotFound"))
        # The storage browser's changes: the same token and origin rules; bad metadata named.
        store = lambda what, query, **kw: requests.post(  # noqa: E731
            f"{self.arm}/portal/api/storage/{what}?account=devstoreaccount1&{query}", verify=False, timeout=10, **kw)
        r = store("upload", "container=browse&name=sneaky.txt", data=b"x")
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (403, "PortalTokenMissing"))
        self.assertFalse(BlobServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
                         .get_blob_client("browse", "sneaky.txt").exists())
        r = store("delete", "container=browse&name=dir/inner.txt", headers={"X-Portal-Token": token, "Origin": "https://evil.example"})
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (403, "CrossOriginAction"))
        self.assertTrue(BlobServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
                        .get_blob_client("browse", "dir/inner.txt").exists())
        for body, named in [({"metadata": {"1st": "x"}}, "1st"), ({"metadata": {"a": 1}}, "a"),
                            ({"metadata": {"a": "line\nbreak"}}, "a"), ({"meta": {}}, "metadata")]:
            r = store("metadata", "container=browse&name=dir/inner.txt", json=body, headers={"X-Portal-Token": token})
            self.assertEqual(r.status_code, 400, body)
            self.assertIn(named, r.json()["error"]["message"], body)
        r = store("upload", "share=browse-share&path=no/such/dir/f.txt", data=b"x", headers={"X-Portal-Token": token})
        self.assertEqual(r.status_code, 404)
        # A file larger than one Put Range (4 MiB) goes in by ranges, whole.
        big = os.urandom(9 * 1024 * 1024 + 5)
        r = store("upload", "share=browse-share&path=sub/big.bin", data=big, headers={"X-Portal-Token": token})
        self.assertEqual(r.status_code, 201, r.text)
        self.assertEqual(ShareServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
                         .get_share_client("browse-share").get_file_client("sub/big.bin").download_file().readall(), big)
        # A job made by a job schedule ("sched:job-1") is read like any other: not found here, not refused.
        r = get("/portal/api/batch/read?account=devbatchaccount1&path=/jobs/sched:job-1")
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (404, "JobNotFound"))
        page = get("/portal/")
        self.assertIn("script-src 'self'", page.headers["Content-Security-Policy"])
        self.assertEqual(page.headers["X-Frame-Options"], "DENY")
        self.assertEqual(page.text.count("<script"), page.text.count('<script src="/portal/'))  # no inline script
        # An unknown page of the portal's own routes, in the browser.
        self.open("#/nowhere")
        self.eventually(lambda: self.text_of("main h1") == "Not found", "the not-found view")

    def test_3_a_scenario_report_shows_its_timeline_in_the_browser(self):
        library = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenarios", "library")
        report = os.path.join(self.output, "report.html")
        done = subprocess.run([harness.EMULATOR, "replay", os.path.join(library, "preemption_requeue.scenario"),
                               "--report", report], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.browser.get("file://" + os.path.abspath(report))
        self.assertEqual(self.browser.title, "Scenario replay: all passed")
        rows = self.browser.execute_script(
            "return [...document.querySelectorAll('svg#jobs-0 g.row')].map((g) => g.dataset.name)")
        self.assertEqual(rows, ["mnist"])
        nodes = self.browser.execute_script("return document.querySelectorAll('svg#nodes-0 g.row').length")
        self.assertEqual(nodes, 2)
        width = self.browser.execute_script("return document.querySelector('svg#jobs-0').getBoundingClientRect().width")
        self.assertGreater(width, 500)  # drawn, not an empty box
        self.shot("scenario-report")

    def test_4_the_page_says_when_the_emulator_stopped(self):
        self.open("#/")
        self.eventually(lambda: "live" in (self.text_of("#status") or ""), "a live page")
        code, _ = self.emu.stop()
        self.assertEqual(code, 0)
        self.eventually(lambda: "disconnected" in (self.text_of("#status") or ""), "the disconnected status")
        self.shot("disconnected")


if __name__ == "__main__":
    unittest.main()
