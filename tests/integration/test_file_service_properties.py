"""File service properties (hour and minute metrics, CORS rules, SMB protocol settings, share soft
delete's retention) through azure.storage.fileshare's get/set_service_properties, the shape that
depends on x-ms-version, the File CORS rules enforced on the File endpoint, the answers to bad
documents (nothing stored), and the account SAS each needs."""
import datetime
import unittest

import requests
from azure.core.exceptions import HttpResponseError
from azure.storage.fileshare import (AccountSasPermissions, CorsRule, Metrics, ResourceTypes, RetentionPolicy,
                                     ShareProtocolSettings, ShareServiceClient, ShareSmbSettings, SmbMultichannel,
                                     generate_account_sas)

from harness import DEV_ACCOUNT, DEV_KEY, StorageTestCase
from raw_storage import RawClient


def properties_body(inner):
    return f'<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>{inner}</StorageServiceProperties>'


class FileServiceProperties(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = ShareServiceClient(self.endpoints["file"] + "/" + DEV_ACCOUNT,
                                      credential={"account_name": DEV_ACCOUNT, "account_key": DEV_KEY})
        self.raw = RawClient(self.endpoints["file"])
        self.svc.set_service_properties(cors=[])  # the properties are the account's, shared by the class

    def put(self, inner, version="2020-02-10"):
        r = RawClient(self.endpoints["file"], version=version).request(
            "PUT", f"/{DEV_ACCOUNT}", [("restype", "service"), ("comp", "properties")], body=properties_body(inner).encode())
        return r.status, r.code, r

    def get_xml(self, version):
        r = RawClient(self.endpoints["file"], version=version).request(
            "GET", f"/{DEV_ACCOUNT}", [("restype", "service"), ("comp", "properties")])
        self.assertEqual(r.status, 200, r.body)
        return r.body.decode("utf-8-sig")

    def test_a_new_account_reports_the_services_defaults(self):
        props = self.svc.get_service_properties()
        self.assertFalse(props["hour_metrics"].enabled)
        self.assertFalse(props["minute_metrics"].enabled)
        self.assertEqual(props["hour_metrics"].version, "1.0")
        self.assertEqual(props["cors"], [])
        self.assertFalse(props["protocol"].smb.multichannel.enabled)

    def test_what_is_set_is_kept_and_what_is_not_named_stays(self):
        self.svc.set_service_properties(
            hour_metrics=Metrics(enabled=True, include_apis=True, retention_policy=RetentionPolicy(enabled=True, days=5)),
            cors=[CorsRule(["www.xyz.com"], ["GET"]),
                  CorsRule(["www.xyz.com", "www.ab.com"], ["GET", "PUT"], allowed_headers=["x-ms-meta-data*"],
                           exposed_headers=["x-ms-meta-source*"], max_age_in_seconds=500)],
            protocol=ShareProtocolSettings(smb=ShareSmbSettings(multichannel=SmbMultichannel(enabled=True))))
        props = self.svc.get_service_properties()
        self.assertTrue(props["hour_metrics"].enabled)
        self.assertTrue(props["hour_metrics"].include_apis)
        self.assertEqual(props["hour_metrics"].retention_policy.days, 5)
        self.assertEqual([r.allowed_origins for r in props["cors"]], ["www.xyz.com", "www.xyz.com,www.ab.com"])
        self.assertEqual(props["cors"][1].max_age_in_seconds, 500)
        self.assertTrue(props["protocol"].smb.multichannel.enabled)
        # A Set that names only the minute metrics keeps the rest.
        self.svc.set_service_properties(minute_metrics=Metrics(enabled=False))
        props = self.svc.get_service_properties()
        self.assertTrue(props["hour_metrics"].enabled)
        self.assertEqual(len(props["cors"]), 2)
        self.assertTrue(props["protocol"].smb.multichannel.enabled)
        self.svc.set_service_properties(
            hour_metrics=Metrics(enabled=False), protocol=ShareProtocolSettings(smb=ShareSmbSettings(
                multichannel=SmbMultichannel(enabled=False))))

    def test_the_shape_follows_the_version(self):
        self.assertEqual(self.put("<ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>7</Days>"
                                  "</ShareDeleteRetentionPolicy>")[:2], (202, None))
        self.addCleanup(self.put, "<ShareDeleteRetentionPolicy><Enabled>false</Enabled></ShareDeleteRetentionPolicy>")
        latest = self.get_xml("2020-02-10")
        self.assertIn("<ProtocolSettings><SMB><Multichannel><Enabled>false</Enabled></Multichannel></SMB>"
                      "</ProtocolSettings>", latest)
        self.assertIn("<ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>7</Days></ShareDeleteRetentionPolicy>",
                      latest)
        older = self.get_xml("2019-07-07")
        self.assertNotIn("ProtocolSettings", older)
        self.assertNotIn("ShareDeleteRetentionPolicy", older)
        self.assertIn("<HourMetrics>", older)
        self.assertRegex(older, r"<Cors\s*/>|<Cors></Cors>")

    def test_bad_documents_are_refused_and_nothing_is_stored(self):
        rule = ("<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>{m}</AllowedMethods>"
                "<MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule>")
        before = self.get_xml("2020-02-10")
        cases = [
            ("<Cors>" + rule.format(m="GET") * 6 + "</Cors>", "InvalidXmlDocument"),  # as recorded
            ("<Cors>" + rule.format(m="FETCH") + "</Cors>", "InvalidXmlNodeValue"),
            ("<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs>"
             "<RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy></HourMetrics>",
             "InvalidXmlNodeValue"),
            ("<ProtocolSettings><SMB><Multichannel><Enabled>maybe</Enabled></Multichannel></SMB></ProtocolSettings>",
             "InvalidXmlNodeValue"),
            ("<ProtocolSettings><SMB><Multichannel></Multichannel></SMB></ProtocolSettings>", "InvalidXmlDocument"),
            ("<ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>0</Days></ShareDeleteRetentionPolicy>",
             "InvalidXmlNodeValue"),
            # A valid element beside a bad one: the document is refused whole.
            ("<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false"
             "</Enabled></RetentionPolicy></MinuteMetrics><Cors>" + rule.format(m="FETCH") + "</Cors>",
             "InvalidXmlNodeValue"),
        ]
        for inner, code in cases:
            with self.subTest(inner=inner[:60]):
                self.assertEqual(self.put(inner)[:2], (400, code))
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}", [("restype", "service"), ("comp", "properties")],
                             body=b"<StorageServiceProperties><Cors>")
        self.assertEqual((r.status, r.code), (400, "InvalidXmlDocument"))
        self.assertEqual(self.get_xml("2020-02-10"), before)

    def test_a_sas_needs_the_service_level_and_the_letter(self):
        def sas(permission, resource_types):
            return generate_account_sas(DEV_ACCOUNT, DEV_KEY, resource_types, permission,
                                        datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
        url = self.endpoints["file"] + "/" + DEV_ACCOUNT
        reader = ShareServiceClient(url, credential=sas(AccountSasPermissions(read=True), ResourceTypes(service=True)))
        self.assertIn("cors", reader.get_service_properties())
        with self.assertRaises(HttpResponseError) as caught:
            reader.set_service_properties(cors=[])
        self.assertEqual(caught.exception.error_code, "AuthorizationPermissionMismatch")
        writer = ShareServiceClient(url, credential=sas(AccountSasPermissions(write=True), ResourceTypes(service=True)))
        writer.set_service_properties(cors=[])
        share_level = ShareServiceClient(url, credential=sas(AccountSasPermissions(read=True, write=True),
                                                             ResourceTypes(container=True, object=True)))
        with self.assertRaises(HttpResponseError) as caught:
            share_level.get_service_properties()
        self.assertEqual(caught.exception.error_code, "AuthorizationResourceTypeMismatch")

    def test_the_file_cors_rules_are_enforced_on_the_file_endpoint(self):
        share = self.svc.create_share("cors-files")
        self.addCleanup(self.svc.delete_share, "cors-files")
        url = f"{self.endpoints['file']}/{DEV_ACCOUNT}/cors-files?restype=share"
        preflight = {"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}
        self.assertEqual(requests.options(url, headers=preflight, timeout=10).status_code, 403)
        self.svc.set_service_properties(cors=[CorsRule(["https://app.example"], ["GET"], max_age_in_seconds=9)])
        ok = requests.options(url, headers=preflight, timeout=10)
        self.assertEqual(ok.status_code, 200)
        self.assertEqual(ok.headers["Access-Control-Max-Age"], "9")
        self.assertEqual(share.get_share_properties().name, "cors-files")


if __name__ == "__main__":
    unittest.main()
