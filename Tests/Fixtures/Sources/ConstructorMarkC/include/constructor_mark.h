// Linked into fixtures whose code must never run in a test: its ELF
// constructor appends "ran" to $PLUGBOARD_FIXTURE_MARKER, so a test that
// finds the file knows the image's code ran.
void plugboard_fixture_constructor_mark(void);
