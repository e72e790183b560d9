// C for the fleet commands, never linked by the host library: libcurl
// (Debian libcurl4-openssl-dev), and the exchange of two directories.
// libcurl: curl_easy_setopt and curl_easy_getinfo are variadic,
// which Swift cannot call: one typed wrapper per argument kind.
#ifndef PLUGBOARD_FLEET_H
#define PLUGBOARD_FLEET_H
#include <curl/curl.h>

CURLcode fleet_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode fleet_curl_set_pointer(CURL *handle, CURLoption option, const void *value);
CURLcode fleet_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode fleet_curl_set_write(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *), void *context);
CURLcode fleet_curl_set_header_callback(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *), void *context);
CURLcode fleet_curl_set_read(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *), void *context);
CURLcode fleet_curl_set_progress(CURL *handle, int (*callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t), void *context);
long fleet_curl_status(CURL *handle);

/// renameat2(RENAME_EXCHANGE): swaps two paths on one file system in one
/// step (a staged plugin set and the plugins directory); 0 or -1 and errno.
int fleet_rename_exchange(const char *from, const char *to);

#endif
