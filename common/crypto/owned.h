// unique_ptr for C library objects freed by a function of their own (OpenSSL's EVP_PKEY_free,
// X509_free, BIO_free, BN_free; std::fclose): Owned<EVP_PKEY, EVP_PKEY_free>.
#pragma once

#include <memory>

namespace bai::crypto {

template <auto Free>
struct FreeWith {
    template <typename T>
    void operator()(T* p) const { Free(p); }
};

template <typename T, auto Free>
using Owned = std::unique_ptr<T, FreeWith<Free>>;

}  // namespace bai::crypto
