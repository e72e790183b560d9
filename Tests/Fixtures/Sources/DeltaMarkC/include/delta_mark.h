// MarkedDelta's constructor: appends "ran" to $TMPDIR/fixture-delta-ran, so
// a test that gives a process (a plugboard command, a scanner) its own
// TMPDIR can tell whether the image's code ran there. TMPDIR, unlike a
// variable of the tests' own, reaches scanner processes by default.
void plugboard_fixture_delta_mark(void);
