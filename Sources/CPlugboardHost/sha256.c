// SHA-256 from the system's OpenSSL libcrypto (Debian libssl-dev): the lock
// file's hashes are never computed by cryptography written here. Only this
// file includes OpenSSL, so the host's public module map does not.
#include <openssl/evp.h>
#include "plugboard_host.h"

void *plugboard_sha256_begin(void) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context != NULL && EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(context);
        return NULL;
    }
    return context;
}

int plugboard_sha256_update(void *context, const void *bytes, size_t count) {
    return EVP_DigestUpdate(context, bytes, count) == 1 ? 0 : -1;
}

int plugboard_sha256_end(void *context, uint8_t *digest) {
    unsigned int length = 0;
    int ok = EVP_DigestFinal_ex(context, digest, &length) == 1 && length == 32;
    EVP_MD_CTX_free(context);
    return ok ? 0 : -1;
}

void plugboard_sha256_discard(void *context) { EVP_MD_CTX_free(context); }
