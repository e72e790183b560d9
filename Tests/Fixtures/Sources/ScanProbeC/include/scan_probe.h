#ifndef SCAN_PROBE_H
#define SCAN_PROBE_H
void plugboard_fixture_scan_probe(void);
#endif
