#include "plugboard_fleet.h"

CURLcode fleet_curl_set_long(CURL *handle, CURLoption option, long value) { return curl_easy_setopt(handle, option, value); }
CURLcode fleet_curl_set_pointer(CURL *handle, CURLoption option, const void *value) { return curl_easy_setopt(handle, option, value); }
CURLcode fleet_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) { return curl_easy_setopt(handle, option, value); }

CURLcode fleet_curl_set_write(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *), void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_WRITEDATA, context);
}

CURLcode fleet_curl_set_header_callback(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *), void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_HEADERDATA, context);
}

CURLcode fleet_curl_set_read(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *), void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_READDATA, context);
}

CURLcode fleet_curl_set_progress(CURL *handle, int (*callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t), void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_XFERINFODATA, context);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
}

long fleet_curl_status(CURL *handle) {
    long status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    return status;
}
