const void *plugboard_entry(void);
