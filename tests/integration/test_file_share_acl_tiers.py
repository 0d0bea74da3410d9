"""A share's stored access policies (Get/Set Share ACL through ShareClient.set/get_share_access_policy,
at most five, and a share or file SAS naming one with `si`) and its access tier (Create Share and
Set Share Properties with x-ms-access-tier, shown by the properties and listings), with the bad
inputs answered as the service answers them and nothing stored."""
import datetime
import unittest

import requests
from azure.core.exceptions import HttpResponseError
from azure.storage.fileshare import (AccessPolicy, ShareSasPermissions, ShareServiceClient, generate_file_sas,
                                     generate_share_sas)

from harness import DEV_ACCOUNT, DEV_KEY, StorageTestCase
from raw_storage import RawClient


class ShareAclAndTiers(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.raw = RawClient(self.endpoints["file"], version="2020-02-10")

    def make(self, **kwargs):
        share = self.svc.create_share(self.name, **kwargs)
        self.addCleanup(lambda: self.svc.delete_share(self.name, delete_snapshots=True))
        return share

    def error_of(self, call):
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def test_policies_set_read_and_used_by_a_sas(self):
        share = self.make()
        share.get_file_client("f.txt").upload_file(b"hello")
        now = datetime.datetime.utcnow().replace(microsecond=0)
        policy = AccessPolicy(permission=ShareSasPermissions(read=True), start=now - datetime.timedelta(minutes=5),
                              expiry=now + datetime.timedelta(hours=1))
        share.set_share_access_policy({"readers": policy, "empty": AccessPolicy()})
        got = share.get_share_access_policy()["signed_identifiers"]
        self.assertEqual([i.id for i in got], ["readers", "empty"])
        self.assertEqual(got[0].access_policy.permission, "r")
        self.assertIsNone(got[1].access_policy)  # a policy with nothing in it is listed without one
        url = f"{self.endpoints['file']}/{DEV_ACCOUNT}/{self.name}/f.txt"
        # A file SAS and a share SAS that name the policy read; it grants nothing else.
        for sas in (generate_file_sas(DEV_ACCOUNT, self.name, ["f.txt"], account_key=DEV_KEY, policy_id="readers"),
                    generate_share_sas(DEV_ACCOUNT, self.name, account_key=DEV_KEY, policy_id="readers")):
            got = requests.get(f"{url}?{sas}", headers={"x-ms-version": "2020-02-10"}, timeout=10)
            self.assertEqual((got.status_code, got.content), (200, b"hello"))
            write = requests.put(f"{url}?{sas}&comp=metadata", headers={"x-ms-version": "2020-02-10", "x-ms-meta-a": "b"},
                                 timeout=10)
            self.assertEqual(write.status_code, 403)
        unknown = generate_file_sas(DEV_ACCOUNT, self.name, ["f.txt"], account_key=DEV_KEY, policy_id="nobody")
        self.assertEqual(requests.get(f"{url}?{unknown}", timeout=10).status_code, 403)
        # Without the policy, the SAS that named it reads no more.
        share.set_share_access_policy({})
        sas = generate_file_sas(DEV_ACCOUNT, self.name, ["f.txt"], account_key=DEV_KEY, policy_id="readers")
        self.assertEqual(requests.get(f"{url}?{sas}", timeout=10).status_code, 403)
        self.assertEqual(share.get_share_access_policy()["signed_identifiers"], [])

    def test_bad_policies_store_nothing(self):
        share = self.make()
        share.set_share_access_policy({"keep": AccessPolicy(permission="r")})
        path = f"/{DEV_ACCOUNT}/{self.name}"
        six = b"<SignedIdentifiers>" + b"".join(
            b"<SignedIdentifier><Id>id%d</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier>" % i
            for i in range(6)) + b"</SignedIdentifiers>"
        r = self.raw.request("PUT", path, [("restype", "share"), ("comp", "acl")], body=six)
        self.assertEqual((r.status, r.code), (400, "InvalidXmlDocument"))
        for body in (b"<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Start>soon</Start>"
                     b"</AccessPolicy></SignedIdentifier></SignedIdentifiers>", b"<NotIdentifiers/>", b"<broken"):
            r = self.raw.request("PUT", path, [("restype", "share"), ("comp", "acl")], body=body)
            self.assertEqual(r.status, 400, body)
        self.assertEqual([i.id for i in share.get_share_access_policy()["signed_identifiers"]], ["keep"])
        # A leased share's ACL is set only with its lease (a wrong id is refused).
        share.acquire_lease(lease_duration=-1)
        r = self.raw.request("PUT", path, [("restype", "share"), ("comp", "acl")], body=b"",
                             headers={"x-ms-lease-id": "11111111-2222-3333-4444-555555555555"})
        self.assertEqual(r.status, 412)
        self.raw.request("PUT", path, [("restype", "share"), ("comp", "lease")],
                         headers={"x-ms-lease-action": "break", "x-ms-lease-break-period": "0"})

    def test_tiers_set_at_creation_and_changed(self):
        share = self.make(access_tier="Hot")
        self.assertEqual(share.get_share_properties().access_tier, "Hot")
        share.set_share_properties(access_tier="Cool")
        self.assertEqual(share.get_share_properties().access_tier, "Cool")
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}/{self.name}", [("restype", "share")])
        self.assertEqual(r.headers["x-ms-access-tier"], "Cool")
        self.assertIn("x-ms-access-tier-change-time", r.headers)
        [listed] = [s for s in self.svc.list_shares(name_starts_with=self.name)]
        self.assertEqual(listed.access_tier, "Cool")
        # A quota alone leaves the tier.
        share.set_share_quota(7)
        self.assertEqual(share.get_share_properties().access_tier, "Cool")
        path = f"/{DEV_ACCOUNT}/{self.name}"
        for tier in ("Premium", "Archive", "warm"):
            r = self.raw.request("PUT", path, [("restype", "share"), ("comp", "properties")],
                                 headers={"x-ms-access-tier": tier})
            self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"), tier)
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}-bad", [("restype", "share")],
                             headers={"x-ms-access-tier": "Lukewarm"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        self.assertEqual(self.error_of(self.svc.get_share_client(self.name + "-bad").get_share_properties),
                         (404, "ShareNotFound"))
        self.assertEqual(share.get_share_properties().access_tier, "Cool")
        self.assertEqual(self.svc.create_share(self.name + "-default").get_share_properties().access_tier,
                         "TransactionOptimized")
        self.svc.delete_share(self.name + "-default")


if __name__ == "__main__":
    unittest.main()
