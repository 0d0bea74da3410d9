"""The Azure Batch service's certificates through the azure-batch SDK: add (PFX with its password,
CER), list, get, delete and cancel deletion; deletion of a certificate a pool uses fails (the
service's deleteFailed state) until cancelled or no pool uses it; bad certificates refused naming
the property."""
import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
import unittest

from azure.batch import models as bm

from test_batch_pools import BatchTestCase, vm_configuration


def make_certificate(directory, name, password):
    """A self-signed certificate: (its SHA-1 thumbprint, PFX bytes, DER bytes)."""
    key, cert, pfx = (os.path.join(directory, f"{name}.{ext}") for ext in ("key", "pem", "pfx"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-days", "2",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    subprocess.run(["openssl", "pkcs12", "-export", "-inkey", key, "-in", cert, "-out", pfx, "-passout",
                    f"pass:{password}"], check=True, capture_output=True)
    der = subprocess.run(["openssl", "x509", "-in", cert, "-outform", "DER"], check=True, capture_output=True).stdout
    with open(pfx, "rb") as f:
        return hashlib.sha1(der).hexdigest(), f.read(), der


class BatchCertificates(BatchTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="bai-batch-certs-")
        cls.thumbprint, cls.pfx, cls.der = make_certificate(cls.dir, "nodesdk", "nodesdk")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)
        super().tearDownClass()

    def add(self, thumbprint, data, password=None, certificate_format="pfx"):
        self.client.certificate.add(bm.CertificateAddParameter(
            thumbprint=thumbprint, thumbprint_algorithm="sha1", data=base64.b64encode(data).decode(),
            certificate_format=certificate_format, password=password))

    def error(self, call, *args):
        with self.assertRaises(bm.BatchErrorException) as caught:
            call(*args)
        return caught.exception.error

    def test_added_listed_got_and_deleted(self):
        self.add(self.thumbprint, self.pfx, "nodesdk")
        listed = [c for c in self.client.certificate.list() if c.thumbprint == self.thumbprint]
        self.assertEqual(len(listed), 1)
        got = self.client.certificate.get("sha1", self.thumbprint)
        self.assertEqual((got.state, got.thumbprint_algorithm), (bm.CertificateState.active, "sha1"))
        self.assertEqual(base64.b64decode(got.public_data), self.der)  # the certificate, never its key
        self.assertTrue(got.url.endswith(f"/certificates(thumbprintAlgorithm=sha1,thumbprint={self.thumbprint})"))
        r = self.raw("GET", f"/certificates(thumbprintAlgorithm=sha1,thumbprint={self.thumbprint})")
        self.assertNotIn("eTag", r.json())
        self.assertNotIn("nodesdk", r.text)
        self.assertEqual(self.error(self.client.certificate.cancel_deletion, "sha1", self.thumbprint).code,
                         "CertificateStateActive")
        self.assertEqual(self.error(self.add, self.thumbprint, self.pfx, "nodesdk").code, "CertificateExists")
        self.client.certificate.delete("sha1", self.thumbprint)
        self.assertEqual(self.error(self.client.certificate.get, "sha1", self.thumbprint).code, "CertificateNotFound")

    def test_a_certificate_a_pool_uses_is_not_deleted(self):
        thumbprint, pfx, der = make_certificate(self.dir, "used", "pw")
        self.add(thumbprint, der, certificate_format="cer")
        self.client.pool.add(bm.PoolAddParameter(
            id="with-cert", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
            certificate_references=[bm.CertificateReference(thumbprint=thumbprint, thumbprint_algorithm="sha1")]))
        self.client.certificate.delete("sha1", thumbprint)
        failed = self.client.certificate.get("sha1", thumbprint)
        self.assertEqual((failed.state, failed.previous_state), (bm.CertificateState.delete_failed,
                                                                  bm.CertificateState.active))
        self.assertEqual(failed.delete_certificate_error.code, "CertificateBeingUsed")
        self.assertEqual([(v.name, v.value) for v in failed.delete_certificate_error.values], [("Pool", "with-cert")])
        self.client.certificate.cancel_deletion("sha1", thumbprint)
        self.assertEqual(self.client.certificate.get("sha1", thumbprint).state, bm.CertificateState.active)
        self.client.pool.update_properties("with-cert", bm.PoolUpdatePropertiesParameter(
            certificate_references=[], application_package_references=[], metadata=[]))
        self.client.certificate.delete("sha1", thumbprint)
        self.assertEqual(self.error(self.client.certificate.get, "sha1", thumbprint).code, "CertificateNotFound")

    def test_bad_certificates_are_refused_naming_the_property(self):
        wrong_password = self.error(self.add, self.thumbprint, self.pfx, "guess")
        self.assertEqual((wrong_password.code, wrong_password.values[0].value), ("InvalidPropertyValue", "data"))
        other = "0" * 40
        self.assertEqual(self.error(self.add, other, self.pfx, "nodesdk").values[0].value, "thumbprint")
        self.assertEqual(self.error(self.add, "xyz", self.pfx, "nodesdk").values[0].value, "thumbprint")
        self.assertEqual(self.error(self.add, self.thumbprint, b"not a certificate", "nodesdk").values[0].value, "data")
        r = self.raw("POST", "/certificates", {"thumbprint": self.thumbprint, "thumbprintAlgorithm": "sha256",
                                               "data": base64.b64encode(self.pfx).decode(), "password": "nodesdk"})
        self.assertEqual((r.status_code, r.json()["values"][0]["value"]), (400, "thumbprintAlgorithm"))
        r = self.raw("POST", "/certificates", {"thumbprint": self.thumbprint, "thumbprintAlgorithm": "sha1"})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredProperty"))
        self.assertEqual(self.raw("GET", "/certificates(thumbprintAlgorithm=sha1,thumbprint=" + other + ")").status_code,
                         404)


if __name__ == "__main__":
    unittest.main()
