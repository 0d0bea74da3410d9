"""Blob service properties (logging, metrics, CORS, soft delete, static website) through
azure.storage.blob, CORS as a browser meets it (preflight OPTIONS and the headers on answers),
the secondary endpoint and its replication statistics, and Azurite's AZURITE_ACCOUNTS."""
import datetime
import base64
import os
import subprocess
import tempfile
import unittest

import requests
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import (AccountSasPermissions, BlobAnalyticsLogging, BlobServiceClient,
                                CorsRule, Metrics, ResourceTypes, RetentionPolicy, StaticWebsite,
                                generate_account_sas)

from harness import DEV_ACCOUNT, DEV_KEY, EMULATOR, EPHEMERAL, Emulator, StorageTestCase
from raw_storage import RawClient

SECOND_ACCOUNT = "devstoreaccount2"
SECOND_KEY = "MTAwCjE2NQoyMjUKMTAzCjIxOAoyNDEKNDAKNzgKMTkxCjE3OAoyMTQKMTY5CjIxMwo2MQoyNTIKMTQxCg=="


def properties_body(inner):
    return f'<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>{inner}</StorageServiceProperties>'


class BlobServiceProperties(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = BlobServiceClient(self.endpoints["blob"] + "/" + DEV_ACCOUNT,
                                     credential={"account_name": DEV_ACCOUNT, "account_key": DEV_KEY})
        self.raw = RawClient(self.endpoints["blob"])
        # Every test starts from no CORS rules (the properties are the account's, shared by the class).
        self.svc.set_service_properties(cors=[])

    def test_a_new_account_reports_the_services_defaults(self):
        # Before any Set (setUp's names only the CORS rules, which keeps the rest as it was).
        props = self.svc.get_service_properties()
        self.assertEqual(props["hour_metrics"].version, "1.0")
        self.assertTrue(props["hour_metrics"].enabled)
        self.assertEqual(props["hour_metrics"].retention_policy.days, 7)
        self.assertFalse(props["minute_metrics"].enabled)
        self.assertFalse(props["delete_retention_policy"].enabled)
        self.assertFalse(props["static_website"].enabled)

    def test_what_is_set_is_kept_and_what_is_not_named_stays(self):
        self.svc.set_service_properties(
            analytics_logging=BlobAnalyticsLogging(read=True, write=True, delete=False,
                                                   retention_policy=RetentionPolicy(enabled=True, days=5)),
            minute_metrics=Metrics(enabled=True, include_apis=False, retention_policy=RetentionPolicy(enabled=True, days=4)),
            cors=[CorsRule(["https://app.example"], ["GET", "PUT"], allowed_headers=["x-ms-meta-*"],
                           exposed_headers=["x-ms-request-id"], max_age_in_seconds=300)],
            delete_retention_policy=RetentionPolicy(enabled=True, days=3),
            static_website=StaticWebsite(enabled=True, index_document="index.html", error_document404_path="404.html"))
        props = self.svc.get_service_properties()
        logging = props["analytics_logging"]
        self.assertEqual((logging.read, logging.write, logging.delete), (True, True, False))
        self.assertEqual((logging.retention_policy.enabled, logging.retention_policy.days), (True, 5))
        self.assertEqual((props["minute_metrics"].enabled, props["minute_metrics"].include_apis), (True, False))
        rule = props["cors"][0]
        self.assertEqual((rule.allowed_origins, rule.allowed_methods, rule.allowed_headers, rule.exposed_headers,
                          rule.max_age_in_seconds),
                         ("https://app.example", "GET,PUT", "x-ms-meta-*", "x-ms-request-id", 300))
        self.assertEqual(props["delete_retention_policy"].days, 3)
        self.assertEqual(props["static_website"].index_document, "index.html")
        # A Set that names only the hour metrics leaves the rest as it was.
        self.svc.set_service_properties(hour_metrics=Metrics(enabled=False))
        self.addCleanup(lambda: BlobServiceClient(self.endpoints["blob"] + "/" + DEV_ACCOUNT, credential={
            "account_name": DEV_ACCOUNT, "account_key": DEV_KEY}).set_service_properties(
                hour_metrics=Metrics(enabled=True, include_apis=True, retention_policy=RetentionPolicy(enabled=True, days=7))))
        again = self.svc.get_service_properties()
        self.assertFalse(again["hour_metrics"].enabled)
        self.assertEqual(again["analytics_logging"].retention_policy.days, 5)
        self.assertEqual(len(again["cors"]), 1)
        # ... and survive a restart of the emulator (stored, not cached only).
        self.emu.stop()
        self.emu.start()
        self.__class__.endpoints = self.emu.endpoints
        svc = BlobServiceClient(self.emu.endpoints["blob"] + "/" + DEV_ACCOUNT,
                                credential={"account_name": DEV_ACCOUNT, "account_key": DEV_KEY})
        after = svc.get_service_properties()
        self.assertEqual(after["cors"][0].allowed_origins, "https://app.example")
        self.assertEqual(after["delete_retention_policy"].days, 3)

    def test_cors_rules_may_have_empty_header_lists(self):
        self.svc.set_service_properties(cors=[CorsRule(["example.com"], ["GET"], max_age_in_seconds=8888)])
        rule = self.svc.get_service_properties()["cors"][0]
        self.assertEqual((rule.allowed_headers, rule.exposed_headers, rule.max_age_in_seconds), ("", "", 8888))

    def test_bad_properties_are_refused_naming_the_element(self):
        rule = ("<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>{m}</AllowedMethods>"
                "<MaxAgeInSeconds>{age}</MaxAgeInSeconds><AllowedHeaders></AllowedHeaders>"
                "<ExposedHeaders></ExposedHeaders></CorsRule>")
        cases = [
            ("<Cors>" + rule.format(m="FETCH", age=1) + "</Cors>", 400, "InvalidXmlNodeValue", "AllowedMethods"),
            ("<Cors>" + rule.format(m="GET", age=-1) + "</Cors>", 400, "InvalidXmlNodeValue", "MaxAgeInSeconds"),
            # More than five rules: a document the service cannot read, as it answers it.
            ("<Cors>" + rule.format(m="GET", age=1) * 6 + "</Cors>", 400, "InvalidXmlDocument", "Cors"),
            ("<Logging><Version>1.0</Version><Read>true</Read><Write>true</Write><Delete>true</Delete>"
             "<RetentionPolicy><Enabled>true</Enabled><Days>400</Days></RetentionPolicy></Logging>",
             400, "InvalidXmlNodeValue", "Days"),
            ("<HourMetrics><Version>1.0</Version><Enabled>true</Enabled>"
             "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>",
             400, "InvalidXmlDocument", "IncludeAPIs"),
            ("<HourMetrics><Version>3.0</Version><Enabled>false</Enabled>"
             "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>",
             400, "InvalidXmlNodeValue", "Version"),
            ("<DefaultServiceVersion>yesterday</DefaultServiceVersion>", 400, "InvalidXmlNodeValue", "DefaultServiceVersion"),
        ]
        before = self.svc.get_service_properties()
        for inner, status, code, named in cases:
            with self.subTest(named=named):
                r = self.raw.request("PUT", f"/{DEV_ACCOUNT}", [("restype", "service"), ("comp", "properties")],
                                     body=properties_body(inner).encode())
                self.assertEqual((r.status, r.code), (status, code), r.body)
                self.assertIn(named, r.message)
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}", [("restype", "service"), ("comp", "properties")],
                             body=b"<StorageServiceProperties><Cors>")
        self.assertEqual((r.status, r.code), (400, "InvalidXmlDocument"))
        after = self.svc.get_service_properties()
        self.assertEqual(after["hour_metrics"].enabled, before["hour_metrics"].enabled)  # nothing half-applied

    def test_a_sas_needs_the_service_level_and_the_letter(self):
        def sas(permission, resource_types):
            return generate_account_sas(DEV_ACCOUNT, DEV_KEY, resource_types, permission,
                                        datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
        url = self.endpoints["blob"] + "/" + DEV_ACCOUNT
        reader = BlobServiceClient(url, credential=sas(AccountSasPermissions(read=True), ResourceTypes(service=True)))
        self.assertIn("cors", reader.get_service_properties())
        with self.assertRaises(HttpResponseError) as caught:
            reader.set_service_properties(cors=[])
        self.assertEqual(caught.exception.error_code, "AuthorizationPermissionMismatch")
        container_level = BlobServiceClient(url, credential=sas(AccountSasPermissions(read=True, write=True),
                                                                ResourceTypes(container=True, object=True)))
        with self.assertRaises(HttpResponseError) as caught:
            container_level.get_service_properties()
        self.assertEqual(caught.exception.error_code, "AuthorizationResourceTypeMismatch")

    def preflight(self, origin, method, headers=None, path="/c/b"):
        h = {"Access-Control-Request-Method": method}
        if origin is not None:
            h["Origin"] = origin
        if headers is not None:
            h["Access-Control-Request-Headers"] = headers
        return requests.options(self.endpoints["blob"] + "/" + DEV_ACCOUNT + path, headers=h, timeout=10)

    def test_preflight_follows_the_rules_in_order(self):
        self.assertEqual(self.preflight("https://app.example", "GET").status_code, 403)  # no rules: refused
        self.svc.set_service_properties(cors=[
            CorsRule(["https://app.example"], ["GET"], allowed_headers=["x-ms-meta-*", "content-type"], max_age_in_seconds=60),
            CorsRule(["*.contoso.com"], ["PUT", "DELETE"], allowed_headers=["*"], max_age_in_seconds=5),
        ])
        ok = self.preflight("https://app.example", "GET", "x-ms-meta-owner, Content-Type")
        self.assertEqual(ok.status_code, 200)
        self.assertEqual(ok.headers["Access-Control-Allow-Origin"], "https://app.example")
        self.assertEqual(ok.headers["Access-Control-Allow-Methods"], "GET")
        self.assertEqual(ok.headers["Access-Control-Allow-Headers"], "x-ms-meta-owner, Content-Type")
        self.assertEqual(ok.headers["Access-Control-Max-Age"], "60")
        self.assertEqual(ok.headers["Access-Control-Allow-Credentials"], "true")
        # A header the first rule does not allow, a method it lacks, an origin not listed.
        refused = self.preflight("https://app.example", "GET", "x-ms-blob-type")
        self.assertEqual(refused.status_code, 403)
        self.assertIn("<Code>CorsPreflightFailure</Code>", refused.text)
        self.assertEqual(self.preflight("https://app.example", "PUT").status_code, 403)
        self.assertEqual(self.preflight("https://other.example", "GET").status_code, 403)
        # Wildcard origins match any run of characters, without regard to case.
        for origin, status in [("https://foo.contoso.com", 200), ("https://a.b.CONTOSO.com", 200),
                               ("https://contoso.com", 403), ("https://notcontoso.com", 403)]:
            with self.subTest(origin=origin):
                r = self.preflight(origin, "PUT", "x-ms-blob-type")
                self.assertEqual(r.status_code, status)
                if status == 200:
                    self.assertEqual(r.headers["Access-Control-Max-Age"], "5")
        # The two required headers.
        missing = self.preflight(None, "GET")
        self.assertEqual((missing.status_code, missing.headers.get("x-ms-error-code")), (400, "InvalidHeaderValue"))

    def test_answers_carry_the_cors_headers_of_the_first_matching_rule(self):
        container = "cors-answers"
        self.svc.create_container(container, public_access="container")
        self.addCleanup(self.svc.delete_container, container)
        self.svc.get_blob_client(container, "b").upload_blob(b"data")
        url = f"{self.endpoints['blob']}/{DEV_ACCOUNT}/{container}/b"
        # Without rules: no CORS headers at all.
        plain = requests.get(url, headers={"Origin": "https://app.example"}, timeout=10)
        self.assertNotIn("Access-Control-Allow-Origin", plain.headers)
        self.assertNotIn("Vary", plain.headers)
        self.svc.set_service_properties(cors=[
            CorsRule(["https://app.example"], ["GET"], exposed_headers=["x-ms-meta-*", "x-ms-request-id"]),
            CorsRule(["*"], ["GET", "HEAD"], exposed_headers=["*"]),
        ])
        named = requests.get(url, headers={"Origin": "https://app.example"}, timeout=10)
        self.assertEqual(named.headers["Access-Control-Allow-Origin"], "https://app.example")
        self.assertEqual(named.headers["Vary"], "Origin")
        self.assertEqual(named.headers["Access-Control-Allow-Credentials"], "true")
        self.assertEqual(named.headers["Access-Control-Expose-Headers"].lower(), "x-ms-request-id")
        anyone = requests.get(url, headers={"Origin": "https://elsewhere.example"}, timeout=10)
        self.assertEqual(anyone.headers["Access-Control-Allow-Origin"], "*")
        self.assertNotIn("Access-Control-Allow-Credentials", anyone.headers)
        exposed = {h.strip().lower() for h in anyone.headers["Access-Control-Expose-Headers"].split(",")}
        self.assertTrue({"etag", "x-ms-blob-type", "x-ms-request-id", "last-modified"} <= exposed, exposed)
        # Errors too: a browser must be able to read why.
        missing = requests.get(f"{self.endpoints['blob']}/{DEV_ACCOUNT}/{container}/nothing",
                               headers={"Origin": "https://app.example"}, timeout=10)
        self.assertEqual(missing.status_code, 404)
        self.assertEqual(missing.headers["Access-Control-Allow-Origin"], "https://app.example")
        self.assertIn("x-ms-request-id", missing.headers["Access-Control-Expose-Headers"].lower())
        # A method no rule allows: only Vary.
        put = requests.put(url, headers={"Origin": "https://app.example"}, timeout=10)
        self.assertNotIn("Access-Control-Allow-Origin", put.headers)
        self.assertEqual(put.headers["Vary"], "Origin")

    def test_the_secondary_endpoint_serves_the_account_and_its_replication_statistics(self):
        host = self.endpoints["blob"].split("//", 1)[1]
        secondary = BlobServiceClient(self.endpoints["blob"] + f"/{DEV_ACCOUNT}-secondary",
                                      credential={"account_name": DEV_ACCOUNT, "account_key": DEV_KEY},
                                      secondary_hostname=host)
        stats = secondary.get_service_stats()
        self.assertEqual(stats["geo_replication"]["status"], "live")
        self.assertLess(abs((stats["geo_replication"]["last_sync_time"] -
                             datetime.datetime.now(datetime.timezone.utc)).total_seconds()), 300)
        self.svc.create_container("replicated")
        self.addCleanup(self.svc.delete_container, "replicated")
        self.svc.get_blob_client("replicated", "b").upload_blob(b"same bytes")
        self.assertEqual(secondary.get_blob_client("replicated", "b").download_blob().readall(), b"same bytes")
        listing = self.raw.request("GET", f"/{DEV_ACCOUNT}-secondary", [("comp", "list")])
        self.assertEqual(listing.status, 200)
        self.assertIn(f"/{DEV_ACCOUNT}-secondary/\"".encode(), listing.body)
        # The primary has no replication statistics.
        primary = self.raw.request("GET", f"/{DEV_ACCOUNT}", [("restype", "service"), ("comp", "stats")])
        self.assertEqual((primary.status, primary.code), (400, "InvalidQueryParameterValue"))
        # An unknown account's "secondary" is no account.
        nobody = self.raw.request("GET", "/nosuchaccount-secondary", [("comp", "list")])
        self.assertEqual(nobody.status, 404)

    def test_account_information_says_read_access_geo_redundant(self):
        info = self.svc.get_account_information()
        self.assertEqual((info["sku_name"], info["account_kind"]), ("Standard_RAGRS", "StorageV2"))


class AzuriteAccounts(unittest.TestCase):
    def test_azurite_accounts_adds_accounts_and_second_keys_as_azurite_reads_them(self):
        env = dict(os.environ)
        # Azurite's own test setting: a second key that is not strict base64, and a second account.
        env["AZURITE_ACCOUNTS"] = f"{DEV_ACCOUNT}:{DEV_KEY}:testing_key;{SECOND_ACCOUNT}:{SECOND_KEY}"
        with Emulator(env=env) as emu:
            blob = emu.endpoints["blob"]
            second = BlobServiceClient(f"{blob}/{SECOND_ACCOUNT}",
                                       credential={"account_name": SECOND_ACCOUNT, "account_key": SECOND_KEY})
            second.create_container("mine")
            self.assertEqual([c.name for c in second.list_containers()], ["mine"])
            # Another account's key is no key of this one.
            wrong = BlobServiceClient(f"{blob}/{DEV_ACCOUNT}",
                                      credential={"account_name": DEV_ACCOUNT, "account_key": SECOND_KEY})
            with self.assertRaises(HttpResponseError) as caught:
                list(wrong.list_containers())
            self.assertEqual(caught.exception.error_code, "AuthenticationFailed")
            # The Node SDK decodes "testing_key" leniently (the URL-safe alphabet too, trailing
            # bits dropped), as Python's urlsafe decoder does: those bytes sign as the second key.
            lenient = base64.b64encode(base64.urlsafe_b64decode("testing_key" + "=")).decode()
            by_second_key = BlobServiceClient(f"{blob}/{DEV_ACCOUNT}",
                                              credential={"account_name": DEV_ACCOUNT, "account_key": lenient})
            self.assertEqual(list(by_second_key.list_containers()), [])
            # The first account's own key still works beside its second one.
            first = BlobServiceClient(f"{blob}/{DEV_ACCOUNT}", credential={"account_name": DEV_ACCOUNT, "account_key": DEV_KEY})
            self.assertEqual(list(first.list_containers()), [])

    def test_a_malformed_azurite_accounts_stops_the_start_with_a_message(self):
        env = dict(os.environ)
        for value, named in [("Not_An_Account:abc", "Not_An_Account"), ("devstoreaccount3", "devstoreaccount3"),
                             ("devstoreaccount3:!!!", "devstoreaccount3")]:
            with self.subTest(value=value), tempfile.TemporaryDirectory() as location:
                env["AZURITE_ACCOUNTS"] = value
                result = subprocess.run([EMULATOR, "--location", location, *EPHEMERAL], env=env,
                                        capture_output=True, text=True, timeout=20)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("AZURITE_ACCOUNTS", result.stderr)
                self.assertIn(named, result.stderr)

if __name__ == "__main__":
    unittest.main()
