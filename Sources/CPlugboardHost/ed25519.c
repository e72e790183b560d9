// Ed25519 and BLAKE2b-512 from the system's OpenSSL libcrypto (Debian
// libssl-dev), for signed lock files in minisign's format: no cryptography
// is written here, only calls into libcrypto's EVP interface.
#include <openssl/evp.h>
#include "plugboard_host.h"

int plugboard_ed25519_public_key(const uint8_t *seed, uint8_t *public_key) {
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
    if (key == NULL) return -1;
    size_t length = 32;
    int ok = EVP_PKEY_get_raw_public_key(key, public_key, &length) == 1 && length == 32;
    EVP_PKEY_free(key);
    return ok ? 0 : -1;
}

int plugboard_ed25519_sign(const uint8_t *seed, const void *message, size_t count, uint8_t *signature) {
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    size_t length = 64;
    int ok = key != NULL && context != NULL
        && EVP_DigestSignInit(context, NULL, NULL, NULL, key) == 1
        && EVP_DigestSign(context, signature, &length, message, count) == 1 && length == 64;
    EVP_MD_CTX_free(context);
    EVP_PKEY_free(key);
    return ok ? 0 : -1;
}

int plugboard_ed25519_verify(const uint8_t *public_key, const void *message, size_t count, const uint8_t *signature) {
    EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, public_key, 32);
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    int ok = key != NULL && context != NULL
        && EVP_DigestVerifyInit(context, NULL, NULL, NULL, key) == 1
        && EVP_DigestVerify(context, signature, 64, message, count) == 1;
    EVP_MD_CTX_free(context);
    EVP_PKEY_free(key);
    return ok ? 1 : 0;
}

int plugboard_blake2b512(const void *message, size_t count, uint8_t *digest) {
    unsigned int length = 0;
    return EVP_Digest(message, count, digest, &length, EVP_blake2b512(), NULL) == 1 && length == 64 ? 0 : -1;
}
