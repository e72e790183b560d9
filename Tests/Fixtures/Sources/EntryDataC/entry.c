// `plugboard_entry` exported as data, not code: calling it would jump into
// a data page. The Swift half of the product gives it Swift metadata.
#include "entry_data.h"
const void *plugboard_entry[4] = {0, 0, 0, 0};
